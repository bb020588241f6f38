// The approval card's view (anywidget ESM). The person's answer goes to the
// kernel as one custom message carrying the note and the save box as they are
// at the click, so nothing typed can be lost to a state update still on its
// way. Keys while the card has focus: y allow, a always allow, n deny; Enter
// in the note denies with the note.
const CHOICES = [
  ["allow", "Allow", "Run this call once (y)"],
  ["always", "Always allow", "Run it, and allow such calls for the rest of this session (a)"],
  ["deny", "Deny", "Do not run it; the note is passed to the model (n, or Enter in the note)"],
];
const KEYS = { y: "allow", a: "always", n: "deny" };

function node(tag, className, text) {
  const el = document.createElement(tag);
  if (className) el.className = className;
  if (text !== undefined) el.textContent = text;
  return el;
}

function typingElsewhere(card) {
  const active = document.activeElement;
  if (!active || active === document.body || card.contains(active)) return false;
  return active.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(active.tagName);
}

function render({ model, el }) {
  const card = node("div", "mewcode-approval mewcode-card");
  card.tabIndex = -1;
  const live = node("div", "mewcode-card-live");
  const heading = node("div", "mewcode-card-heading");
  const detail = node("div", "mewcode-card-detail");
  const row = node("div", "mewcode-card-buttons");
  const buttons = {};
  for (const [choice, label, title] of CHOICES) {
    const button = node("button", `mewcode-card-button mod-${choice}`, label);
    button.type = "button";
    button.title = title;
    button.addEventListener("click", () => decide(choice));
    buttons[choice] = button;
    row.appendChild(button);
  }
  const extras = node("div", "mewcode-card-extras");
  const note = node("input", "mewcode-card-note");
  note.type = "text";
  note.placeholder = "Optional note to the model (Enter denies with it)";
  note.value = model.get("note");
  const saveLabel = node("label", "mewcode-card-save");
  const save = node("input");
  save.type = "checkbox";
  save.checked = model.get("save");
  saveLabel.append(save, " Save “Always allow” to this project");
  extras.append(note, saveLabel);
  live.append(heading, detail, row, extras);
  const decided = node("details", "mewcode-card-decided");
  const decidedLine = node("summary");
  const decidedBody = node("div");
  decided.append(decidedLine, decidedBody);
  card.append(live, decided);
  el.appendChild(card);

  let sent = false;
  function decide(choice) {
    if (sent || model.get("decided")) return;
    sent = true;
    for (const b of Object.values(buttons)) b.disabled = true;
    model.send({ event: "decide", choice, note: note.value, save: save.checked });
  }

  note.addEventListener("input", () => {
    model.set("note", note.value);
    model.save_changes();
  });
  note.addEventListener("keydown", (event) => {
    event.stopPropagation(); // typing in the note is not a notebook shortcut
    if (event.key === "Enter" && !event.isComposing) {
      event.preventDefault();
      decide("deny");
    }
  });
  save.addEventListener("change", () => {
    model.set("save", save.checked);
    model.save_changes();
  });
  card.addEventListener("keydown", (event) => {
    if (event.target === note || event.altKey || event.ctrlKey || event.metaKey) return;
    const choice = KEYS[event.key.toLowerCase()];
    if (choice) {
      event.preventDefault();
      event.stopPropagation();
      decide(choice);
    }
  });

  function sync() {
    heading.innerHTML = model.get("heading");
    detail.innerHTML = model.get("detail");
    const verdict = model.get("decided");
    live.hidden = Boolean(verdict);
    decided.hidden = !verdict;
    card.classList.toggle("mod-decided", Boolean(verdict));
    if (verdict) {
      decidedLine.innerHTML = verdict;
      decidedBody.innerHTML = model.get("heading") + model.get("detail");
    }
    if (note.value !== model.get("note") && document.activeElement !== note) {
      note.value = model.get("note");
    }
    save.checked = model.get("save");
  }
  model.on("change:heading", sync);
  model.on("change:detail", sync);
  model.on("change:decided", sync);
  model.on("change:save", sync);
  sync();

  if (!model.get("decided")) {
    requestAnimationFrame(() => {
      card.scrollIntoView({ block: "nearest" });
      if (!typingElsewhere(card)) buttons.allow.focus({ preventScroll: true });
    });
  }
  return () => {
    model.off("change:heading", sync);
    model.off("change:detail", sync);
    model.off("change:decided", sync);
    model.off("change:save", sync);
  };
}

export default { render };
