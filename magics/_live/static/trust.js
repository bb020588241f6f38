// The trust card: what trusting the project's settings would change, and
// Trust / Keep ignoring. A click sends one message; the kernel then
// replaces the card by one line saying what was decided. The card takes
// keyboard focus on "Keep ignoring", so a stray Enter trusts nothing.
function render({ model, el }) {
  const offline = live(el, model);
  const card = node("div", "mewcode-trust mewcode-live");
  card.tabIndex = -1;
  const body = node("div", "mewcode-trust-body");
  const row = node("div", "mewcode-trust-buttons");
  const trust = node("button", "mewcode-trust-button mod-warn", "Trust");
  trust.type = "button";
  trust.title = "Use these settings from now on (this project's MCP servers start at once)";
  const ignore = node("button", "mewcode-trust-button mod-plain", "Keep ignoring");
  ignore.type = "button";
  ignore.title = "Only their deny and ask rules apply (/trust to change)";
  row.append(trust, ignore);
  const status = node("div", "mewcode-trust-status mewcode-muted");
  card.append(body, row, status);
  el.append(card, offline);

  let sent = false;
  function answer(yes) {
    if (sent) return;
    sent = true;
    trust.disabled = ignore.disabled = true;
    status.textContent = yes ? "Trusting…" : "Keeping them ignored…";
    model.send({ event: "answer", trust: yes });
  }
  trust.addEventListener("click", () => answer(true));
  ignore.addEventListener("click", () => answer(false));

  const draw = () => {
    body.innerHTML = model.get("body");
  };
  draw();
  model.on("change:body", draw);
  takeFocus(card, ignore);
  return () => model.off("change:body", draw);
}

export default { render };
