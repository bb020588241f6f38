// The elicitation card: an MCP server asks the person to fill in a form.
// The fields come from the kernel as a list (already checked against what
// the protocol allows); the answer goes back as one custom message with the
// values as they are at the click. The kernel checks them again and, when
// one is wrong, says so in `problem` and the card takes the answer again.
const ACTIONS = [
  ["accept", "Submit", "Send these answers to the server", "mod-ok"],
  ["decline", "Decline", "Tell the server you will not answer", "mod-error"],
  ["cancel", "Cancel", "Dismiss without answering", ""],
];

function inputFor(field) {
  const wrap = node("label", "mewcode-form-field");
  const title = node("span", "mewcode-form-title");
  title.textContent = (field.title || field.name) + (field.required ? " *" : "");
  wrap.appendChild(title);
  let input;
  if (field.kind === "boolean") {
    input = node("input");
    input.type = "checkbox";
    input.checked = field.default === true;
    input.read = () => input.checked;
  } else if (field.kind === "array") {
    input = node("select", "mewcode-form-input");
    input.multiple = true;
    field.enum.forEach((value, i) => {
      const option = node("option");
      option.value = value;
      option.textContent = field.enum_names[i] || value;
      option.selected = Array.isArray(field.default) && field.default.includes(value);
      input.appendChild(option);
    });
    input.read = () => Array.from(input.selectedOptions).map((o) => o.value);
  } else if (field.enum.length) {
    input = node("select", "mewcode-form-input");
    if (!field.required) input.appendChild(node("option"));
    field.enum.forEach((value, i) => {
      const option = node("option");
      option.value = value;
      option.textContent = field.enum_names[i] || value;
      option.selected = field.default === value;
      input.appendChild(option);
    });
    input.read = () => input.value;
  } else {
    input = node("input", "mewcode-form-input");
    const types = { number: "number", integer: "number", email: "email", uri: "url", date: "date" };
    input.type = types[field.format] || types[field.kind] || "text";
    if (field.default !== null && field.default !== undefined) input.value = String(field.default);
    input.read = () => input.value;
  }
  input.addEventListener("keydown", (event) => event.stopPropagation());
  wrap.appendChild(input);
  if (field.description) {
    const about = node("span", "mewcode-form-about");
    about.textContent = field.description;
    wrap.appendChild(about);
  }
  return [field.name, input, wrap];
}

function render({ model, el }) {
  const offline = live(el, model);
  const card = node("div", "mewcode-approval mewcode-card mewcode-elicit");
  card.tabIndex = -1;
  const heading = node("div", "mewcode-card-heading");
  const form = node("div", "mewcode-live mewcode-form");
  const problem = node("div", "mewcode-form-problem");
  const row = node("div", "mewcode-card-buttons");
  const verdict = node("div", "mewcode-card-verdict");
  const inputs = [];
  for (const field of JSON.parse(model.get("fields"))) {
    const [name, input, wrap] = inputFor(field);
    inputs.push([name, input]);
    form.appendChild(wrap);
  }
  const buttons = [];
  let sent = false;
  for (const [action, label, title, look] of ACTIONS) {
    const button = node("button", `mewcode-card-button ${look}`, label);
    button.type = "button";
    button.title = title;
    button.addEventListener("click", () => {
      if (sent || model.get("decided")) return;
      sent = true;
      for (const b of buttons) b.disabled = true;
      const values = {};
      if (action === "accept") for (const [name, input] of inputs) values[name] = input.read();
      model.send({ event: "decide", action, values });
    });
    buttons.push(button);
    row.appendChild(button);
  }
  form.append(problem, row);
  card.append(heading, form, verdict, offline);
  el.appendChild(card);

  function sync() {
    heading.innerHTML = model.get("heading");
    problem.textContent = model.get("problem");
    const answer = model.get("decided");
    card.classList.toggle("mod-decided", Boolean(answer));
    form.hidden = Boolean(answer);
    verdict.hidden = !answer;
    verdict.innerHTML = answer;
    if (!answer && model.get("problem")) {
      sent = false; // the kernel refused the values: take them again
      for (const b of buttons) b.disabled = false;
    }
  }
  const events = ["heading", "problem", "decided"];
  for (const name of events) model.on(`change:${name}`, sync);
  sync();
  if (!model.get("decided")) takeFocus(card, inputs.length ? inputs[0][1] : buttons[0]);
  return () => {
    for (const name of events) model.off(`change:${name}`, sync);
  };
}

export default { render };
