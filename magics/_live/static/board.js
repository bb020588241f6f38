// The task board: one row per background task (its state, time, tokens,
// tools and latest activity) with a Stop button while it can be stopped,
// and below them the approval cards of those tasks (each a card widget of
// its own, drawn here as a child view).
function render({ model, el }) {
  const offline = live(el, model);
  const board = node("div", "mewcode-taskboard");
  const title = node("div", "mewcode-taskboard-title");
  const rows = node("div", "mewcode-taskboard-rows");
  const cards = node("div", "mewcode-taskboard-cards");
  board.append(title, rows, cards);
  el.append(board, offline);

  function drawRows() {
    title.textContent = model.get("title");
    rows.replaceChildren();
    for (const row of model.get("rows")) {
      const line = node("div", `mewcode-task mod-${row.state}`);
      const text = node("span", "mewcode-task-text");
      text.innerHTML = row.html;
      line.appendChild(text);
      if (row.stoppable) {
        const stop = node("button", "mewcode-task-stop mod-plain", "Stop");
        stop.type = "button";
        stop.title = "Stop this task (what it did so far is kept)";
        stop.addEventListener("click", () => {
          stop.disabled = true;
          model.send({ event: "stop", id: row.id });
        });
        line.appendChild(stop);
      }
      rows.appendChild(line);
    }
  }

  const views = new Map(); // card reference -> its view (a promise)
  async function drawCards() {
    const wanted = model.get("cards");
    for (const [ref, pending] of views) {
      if (!wanted.includes(ref)) {
        views.delete(ref);
        (await pending).remove();
      }
    }
    for (const ref of wanted) {
      if (views.has(ref)) continue;
      const pending = model.widget_manager
        .get_model(ref.replace(/^IPY_MODEL_/, ""))
        .then((child) => model.widget_manager.create_view(child));
      views.set(ref, pending);
      const view = await pending;
      if (views.get(ref) === pending) cards.appendChild(view.el);
    }
  }

  drawRows();
  drawCards();
  model.on("change:rows", drawRows);
  model.on("change:title", drawRows);
  model.on("change:cards", drawCards);
  return () => {
    model.off("change:rows", drawRows);
    model.off("change:title", drawRows);
    model.off("change:cards", drawCards);
    for (const pending of views.values()) pending.then((view) => view.remove());
  };
}

export default { render };
