// The "Revert N files" card. The button asks the kernel for a preview;
// Restore (Enter or y while the card has focus, which it takes when the
// preview opens) carries it out, Cancel (Escape or n) goes back.
// "Overwrite changed files too" appears only when a file changed since the
// turn.
function render({ model, el }) {
  const offline = live(el, model);
  const card = node("div", "mewcode-revert mewcode-live");
  card.tabIndex = -1;
  const open = node("button", "mewcode-revert-button mod-plain");
  open.type = "button";
  open.title = "Show what reverting this turn's file changes would do";
  const body = node("div", "mewcode-revert-body");
  const row = node("div", "mewcode-revert-buttons");
  const restore = node("button", "mewcode-revert-button mod-warn", "Restore");
  restore.type = "button";
  restore.title = "Restore the files as they were before the turn (Enter, y)";
  const force = node("button", "mewcode-revert-button mod-error", "Overwrite changed files too");
  force.type = "button";
  force.title = "Also overwrite the files changed since the turn";
  const cancel = node("button", "mewcode-revert-button mod-plain", "Cancel");
  cancel.type = "button";
  cancel.title = "Keep the files as they are (Escape, n)";
  row.append(restore, force, cancel);
  card.append(open, body, row);
  el.append(card, offline);

  let busy = false;
  function send(event, extra) {
    if (busy) return;
    busy = true;
    for (const b of [open, restore, force, cancel]) b.disabled = true;
    model.send({ event, ...(extra || {}) });
  }
  open.addEventListener("click", () => send("preview"));
  restore.addEventListener("click", () => send("restore"));
  force.addEventListener("click", () => send("restore", { force: true }));
  cancel.addEventListener("click", () => send("cancel"));
  card.addEventListener("keydown", (event) => {
    if (model.get("state") !== "preview" || event.altKey || event.ctrlKey || event.metaKey) return;
    const key = event.key.toLowerCase();
    if ((key === "enter" || key === "y") && model.get("can_restore") && !model.get("conflicts")) {
      event.preventDefault();
      event.stopPropagation();
      send("restore");
    } else if (key === "escape" || key === "n") {
      event.preventDefault();
      event.stopPropagation();
      send("cancel");
    }
  });

  function sync() {
    busy = false;
    const state = model.get("state");
    open.textContent = model.get("label");
    open.hidden = state !== "ready";
    body.hidden = state === "ready";
    body.innerHTML = state === "ready" ? "" : model.get("body");
    row.hidden = state !== "preview";
    restore.hidden = !model.get("can_restore") || model.get("conflicts");
    force.hidden = !model.get("conflicts");
    for (const b of [open, restore, force, cancel]) b.disabled = false;
    card.classList.toggle("mod-done", state === "done");
    // done: nothing left to do here, so the page keeps no live control
    card.classList.toggle("mewcode-live", state !== "done");
    if (state === "preview") takeFocus(card, restore.hidden ? cancel : restore);
  }
  const events = ["state", "body", "label", "conflicts", "can_restore"];
  for (const name of events) model.on(`change:${name}`, sync);
  sync();
  return () => {
    for (const name of events) model.off(`change:${name}`, sync);
  };
}

export default { render };
