// The approval card's view. The person's answer goes to the kernel as one
// custom message carrying the note and the save box as they are at the
// click, so nothing typed can be lost to a state update still on its way.
// Keys while the card has focus (it takes it when shown): y allow, a always
// allow, n deny; Enter in the note denies with the note. Once answered the
// card keeps its height (the verdict replaces the buttons), so the page does
// not jump under the pointer; a card drawn already answered is one line.
const CHOICES = [
  ["allow", "Allow", "Run this call once (y)", "mod-ok"],
  ["always", "Always allow", "Run it, and allow such calls for the rest of this session (a)", "mod-info"],
  ["deny", "Deny", "Do not run it; the note is passed to the model (n, or Enter in the note)", "mod-error"],
];
const KEYS = { y: "allow", a: "always", n: "deny" };

function render({ model, el }) {
  const offline = live(el, model);
  const card = node("div", "mewcode-approval mewcode-card");
  card.tabIndex = -1;
  const verdict = node("div", "mewcode-card-verdict");
  const heading = node("div", "mewcode-card-heading");
  const detail = node("div", "mewcode-card-detail");
  const controls = node("div", "mewcode-live mewcode-card-controls");
  const row = node("div", "mewcode-card-buttons");
  const buttons = {};
  for (const [choice, label, title, look] of CHOICES) {
    const button = node("button", `mewcode-card-button ${look}`, label);
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
  controls.append(row, extras);
  const compact = node("details", "mewcode-card-decided");
  const compactLine = node("summary");
  const compactBody = node("div");
  compact.append(compactLine, compactBody);
  card.append(verdict, heading, detail, controls, compact, offline);
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

  const answeredAtFirst = Boolean(model.get("decided"));
  function sync() {
    heading.innerHTML = model.get("heading");
    detail.innerHTML = model.get("detail");
    const answer = model.get("decided");
    card.classList.toggle("mod-decided", Boolean(answer));
    card.classList.toggle("mod-compact", Boolean(answer) && answeredAtFirst);
    if (answer && answeredAtFirst) {
      // drawn already answered: one line that expands to what was asked
      for (const part of [verdict, heading, detail, controls]) part.hidden = true;
      compact.hidden = false;
      compactLine.innerHTML = answer;
      compactBody.innerHTML = model.get("heading") + model.get("detail");
    } else if (answer) {
      // answered here: the verdict takes the buttons' place, the height stays
      if (!card.style.minHeight) card.style.minHeight = `${card.offsetHeight}px`;
      compact.hidden = true;
      controls.hidden = true;
      verdict.hidden = false;
      verdict.innerHTML = answer;
    } else {
      compact.hidden = true;
      verdict.hidden = true;
      controls.hidden = false;
    }
    if (note.value !== model.get("note") && document.activeElement !== note) {
      note.value = model.get("note");
    }
    save.checked = model.get("save");
  }
  const events = ["heading", "detail", "decided", "save"];
  for (const name of events) model.on(`change:${name}`, sync);
  sync();
  if (!answeredAtFirst) takeFocus(card, buttons.allow);
  return () => {
    for (const name of events) model.off(`change:${name}`, sync);
  };
}

export default { render };
