// Shared by every MewCode card (put in front of each card's own module).
//
// live(el, model): marks the view as MewCode's and draws the card's offline
// form (its `offline` HTML), which the stylesheet shows instead of the
// controls once the kernel is gone (ipywidgets marks the view
// "jupyter-widgets-disconnected"), so a restarted kernel leaves text, not
// dead buttons under broken-link icons.
//
// whenShown(el, fn): runs fn once the view is in the page (a view is drawn
// before JupyterLab attaches it, and focus() on a detached node does nothing).
//
// takeFocus(card, target): focus the card's first control so its keys work
// at once, unless the person is typing somewhere else (an editor with text
// in it, an input); a fresh empty cell (where Shift+Enter left them) is not
// typing.
function node(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

function live(el, model) {
  el.classList.add("mewcode-widget");
  const offline = node("div", "mewcode-offline");
  const draw = () => {
    offline.innerHTML = model.get("offline");
  };
  draw();
  model.on("change:offline", draw);
  return offline;
}

function whenShown(el, fn, tries = 120) {
  if (el.isConnected && el.getClientRects().length) {
    fn();
  } else if (tries > 0) {
    requestAnimationFrame(() => whenShown(el, fn, tries - 1));
  }
}

function typingElsewhere(card) {
  const active = document.activeElement;
  if (!active || active === document.body || card.contains(active)) return false;
  if (/^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName)) return true;
  if (!active.isContentEditable) return false;
  // a code cell's editor: typing only if it holds text
  return active.textContent.trim().length > 0;
}

function takeFocus(card, target) {
  whenShown(card, () => {
    card.scrollIntoView({ block: "nearest" });
    if (!typingElsewhere(card) && !target.disabled) target.focus({ preventScroll: true });
  });
}
