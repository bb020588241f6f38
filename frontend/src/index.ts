/**
 * MewCode: the agent reads, edits and runs the cells of the open notebook.
 *
 * For each notebook panel whose kernel has the `mewcode.notebook` comm
 * target (the MewCode kernel, or `%load_ext magics`), this opens a comm and
 * answers the kernel's requests on it:
 *
 * - `read`: the cells as the person sees them now (unsaved typing included),
 *   the selected cell, whether the document has unsaved changes;
 * - `apply`: a batch of cell ops (replace, insert, delete, move, outputs),
 *   all or nothing: each op's `expect` (the source the agent last read) is
 *   checked first, and a cell the person changed since is reported, never
 *   overwritten. The batch is one transaction of the shared model, so it is
 *   one undo step (Ctrl+Z undoes it); with per-cell undo (JupyterLab's
 *   default) a source change is one step of that cell's undo, and cells
 *   inserted, deleted or moved one step of the notebook's (Z in command
 *   mode). Outputs are not undoable, as when a cell runs. It works the same with real-time collaboration (the shared
 *   model is then the collaborative document).
 *
 * A kernel that loads MewCode after this panel connected announces itself
 * with a `mewcode.notebook.ready` comm; the panel links then.
 */
import {
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { PageConfig } from '@jupyterlab/coreutils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';

const TARGET = 'mewcode.notebook';
const READY = 'mewcode.notebook.ready';
const MAX_TEXT = 200000;
const MAX_DATA = 10000000;

type Json = any;

interface IOp {
  op: 'replace' | 'insert' | 'delete' | 'move' | 'outputs';
  id: string;
  source?: string;
  cell_type?: string;
  index?: number;
  expect?: string;
  cell?: Json;
  outputs?: Json[];
  execution_count?: number | null;
}

class Stale extends Error {
  constructor(
    readonly id: string,
    readonly source: string
  ) {
    super(`cell ${id} changed`);
  }
}

function bounded(value: Json): Json {
  if (typeof value === 'string') {
    return value.length > MAX_TEXT
      ? value.slice(0, MAX_TEXT) +
          `\n… [${value.length - MAX_TEXT} more characters not sent]`
      : value;
  }
  if (Array.isArray(value)) {
    return bounded(value.join(''));
  }
  return value;
}

/** An output as sent to the kernel: text bounded, huge payloads named. */
function outputForKernel(output: Json): Json {
  const out: Json = { ...output };
  if (out.text !== undefined) {
    out.text = bounded(out.text);
  }
  if (out.data && typeof out.data === 'object') {
    const data: Json = {};
    for (const [mime, value] of Object.entries(out.data)) {
      const text = Array.isArray(value) ? value.join('') : value;
      if (typeof text === 'string' && text.length > MAX_DATA) {
        data['text/plain'] = `[${mime} output of ${text.length} characters: not sent]`;
      } else if (mime.startsWith('image/') || typeof text !== 'string') {
        data[mime] = text;
      } else {
        data[mime] = bounded(text);
      }
    }
    out.data = data;
  }
  return out;
}

class Link {
  private comm: any = null;
  private kernel: any = null;

  constructor(private readonly panel: NotebookPanel) {
    panel.sessionContext.kernelChanged.connect(() => this.connect());
    panel.sessionContext.statusChanged.connect((_, status) => {
      if (status === 'restarting' || status === 'autorestarting') {
        this.comm = null;
      }
      if (status === 'idle' && this.comm === null) {
        this.connect();
      }
    });
    panel.context.pathChanged.connect(() => {
      this.comm?.send({ type: 'path', ...this.where() });
    });
    void panel.sessionContext.ready.then(() => this.connect());
  }

  private where(): Json {
    const context: any = this.panel.context;
    return {
      // without a drive prefix ("RTC:work.ipynb" with real-time collaboration)
      path: context.localPath ?? context.path,
      serverRoot: PageConfig.getOption('serverRoot')
    };
  }

  connect(): void {
    const kernel = this.panel.sessionContext.session?.kernel;
    if (!kernel) {
      return;
    }
    if (kernel !== this.kernel) {
      this.kernel = kernel;
      this.comm = null;
      kernel.registerCommTarget(READY, () => {
        this.comm = null;
        this.open();
      });
    }
    if (this.comm === null) {
      this.open();
    }
  }

  private open(): void {
    const kernel = this.kernel;
    if (!kernel || kernel.isDisposed) {
      return;
    }
    let comm: any;
    try {
      comm = kernel.createComm(TARGET);
    } catch (e) {
      return;
    }
    this.comm = comm;
    comm.onMsg = (msg: Json) => this.handle(comm, msg.content.data);
    comm.onClose = () => {
      if (this.comm === comm) {
        this.comm = undefined; // closed by the kernel: it has no MewCode (yet)
      }
    };
    comm.open(this.where());
  }

  private handle(comm: any, data: Json): void {
    if (!data || data.type !== 'request') {
      return;
    }
    let answer: Json;
    try {
      if (data.op === 'read') {
        answer = { ok: true, result: this.read(data.full) };
      } else if (data.op === 'apply') {
        answer = { ok: true, result: this.apply(data.ops as IOp[]) };
      } else {
        answer = { ok: false, error: `unknown request ${data.op}` };
      }
    } catch (e) {
      if (e instanceof Stale) {
        answer = { ok: false, stale: { id: e.id, source: e.source } };
      } else {
        answer = { ok: false, error: String((e as Error).message ?? e) };
      }
    }
    comm.send({ type: 'response', id: data.id, ...answer });
  }

  private get shared(): any {
    return (this.panel.model as any).sharedModel;
  }

  private read(full: Json): Json {
    const wanted = full === 'all' ? null : new Set<string>(full ?? []);
    const cells = this.shared.cells.map((cell: any) => {
      const json = cell.toJSON();
      const out: Json = {
        id: cell.id,
        cell_type: cell.cell_type,
        source: cell.getSource()
      };
      if (cell.cell_type === 'code') {
        out.execution_count = json.execution_count ?? null;
      }
      if (wanted === null || wanted.has(cell.id)) {
        out.metadata = json.metadata ?? {};
        if (json.attachments) {
          out.attachments = json.attachments;
        }
        if (cell.cell_type === 'code') {
          out.outputs = (json.outputs ?? []).map(outputForKernel);
        }
      }
      return out;
    });
    return {
      cells,
      selected: this.panel.content.activeCell?.model.id ?? null,
      dirty: this.panel.context.model.dirty
    };
  }

  private index(id: string): number {
    const cells = this.shared.cells;
    for (let i = 0; i < cells.length; i++) {
      if (cells[i].id === id) {
        return i;
      }
    }
    throw new Error(`the notebook has no cell with id ${id}`);
  }

  private typeOf(id: string): string {
    return this.shared.cells[this.index(id)].cell_type;
  }

  private apply(ops: IOp[]): Json {
    const shared = this.shared;
    // every check first: all or nothing
    for (const op of ops) {
      if (op.op === 'insert') {
        continue;
      }
      const cell = shared.cells[this.index(op.id)];
      if (op.expect !== undefined && op.expect !== null) {
        const now = cell.getSource();
        if (now !== op.expect) {
          throw new Stale(op.id, now);
        }
      }
    }
    const outputsOnly = ops.every(op => op.op === 'outputs');
    // With per-cell undo (JupyterLab's default), a cell's Ctrl+Z undoes what was
    // done with the cell as origin: a source change is made that way, as its own
    // step; cells inserted, deleted or moved are the notebook's (its undo, Z).
    const perCell = !!shared.disableDocumentWideUndoRedo;
    const ownStep = (op: IOp) =>
      perCell && op.op === 'replace' && !(op.cell_type && op.cell_type !== this.typeOf(op.id));
    for (const op of ops.filter(ownStep)) {
      const cell = shared.cells[this.index(op.id)];
      const undo = cell.undoManager;
      undo?.stopCapturing(); // the person's typing before is a step of its own
      cell.transact(() => cell.setSource(op.source ?? ''));
      undo?.stopCapturing(); // and so is what they type after
    }
    const rest = ops.filter(op => !ownStep(op));
    if (rest.length) {
      const undo = shared.undoManager;
      undo?.stopCapturing();
      shared.transact(() => {
        for (const op of rest) {
          this.applyOne(op);
        }
      }, !outputsOnly);
      undo?.stopCapturing();
    }
    return this.read([]);
  }

  private applyOne(op: IOp): void {
    const shared = this.shared;
    if (op.op === 'insert') {
      const cell = { ...(op.cell ?? {}), id: op.id };
      if (Array.isArray(cell.source)) {
        cell.source = cell.source.join('');
      }
      const at = Math.max(0, Math.min(op.index ?? shared.cells.length, shared.cells.length));
      shared.insertCell(at, cell);
      return;
    }
    const index = this.index(op.id);
    const cell = shared.cells[index];
    if (op.op === 'delete') {
      shared.deleteCell(index);
    } else if (op.op === 'move') {
      const to = Math.max(0, Math.min(op.index ?? 0, shared.cells.length - 1));
      shared.moveCell(index, to);
    } else if (op.op === 'replace') {
      if (op.cell_type && op.cell_type !== cell.cell_type) {
        const json = cell.toJSON();
        delete json.outputs;
        delete json.execution_count;
        shared.deleteCell(index);
        shared.insertCell(index, {
          ...json,
          id: op.id,
          cell_type: op.cell_type,
          source: op.source ?? cell.getSource()
        });
      } else if (op.source !== undefined) {
        cell.setSource(op.source);
      }
    } else if (op.op === 'outputs') {
      if (cell.cell_type !== 'code') {
        throw new Error(`cell ${op.id} is not a code cell`);
      }
      cell.setOutputs(op.outputs ?? []);
      cell.execution_count = op.execution_count ?? null;
    }
  }
}

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'mewcode-notebook:plugin',
  description: 'MewCode: the agent works in the open notebook.',
  autoStart: true,
  requires: [INotebookTracker],
  activate: (_app: JupyterFrontEnd, tracker: INotebookTracker) => {
    const links = new WeakMap<NotebookPanel, Link>();
    const track = (panel: NotebookPanel) => {
      if (!links.has(panel)) {
        links.set(panel, new Link(panel));
      }
    };
    tracker.forEach(track);
    tracker.widgetAdded.connect((_, panel) => track(panel));
  }
};

export default plugin;
