// Draws nothing: it brings the shared stylesheet to a page whose MewCode
// widgets are plain ipywidgets (a background turn's box, the thinking), so
// they too lose their broken-link icons when the kernel is gone.
function render({ el }) {
  el.classList.add("mewcode-widget", "mewcode-carrier");
  el.style.display = "none";
}

export default { render };
