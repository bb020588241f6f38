// Shared by every MewCode card (put in front of each card's own module).
//
// live(el, model): marks the view as MewCode's and draws the card's offline
// form (its `offline` HTML), which the stylesheet shows instead of the
// controls once the kernel is gone (ipywidgets marks the view
// "jupyter-widgets-disconnected"; after a restart from JupyterLab's menu it
// does not, so the card also watches the kernel: "mewcode-kernel-gone"), so
// a restarted kernel leaves text, not dead buttons under broken-link icons.
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
  watchKernel(el, model);
  return offline;
}

// The card's comm dies with its kernel: a restart (the same connection, a
// new process) or a shutdown. From then on the card shows its offline form.
function watchKernel(el, model) {
  const kernel = model.widget_manager && model.widget_manager.kernel;
  if (!kernel || !kernel.statusChanged) return;
  const gone = () => el.classList.add("mewcode-kernel-gone");
  const onStatus = (_, status) => {
    if (status === "restarting" || status === "autorestarting" || status === "dead") {
      gone();
      kernel.statusChanged.disconnect(onStatus);
    }
  };
  kernel.statusChanged.connect(onStatus);
  if (kernel.disposed) kernel.disposed.connect(gone);
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
