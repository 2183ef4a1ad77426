// nearsym for VS Code: starts `nearsym serve` (installing it first, with the
// person's consent, when there is none), tells it which editor is active
// (nearsym/didFocus), shows its state and indexing progress in the status
// bar, and offers "nearsym: Go to Symbol in Workspace", a quick pick that
// keeps nearsym's order. VS Code's own Ctrl+T re-sorts every provider's
// results by its fuzzy score and shows same-named symbols in URI order,
// which throws away the closeness to the open file. "nearsym: Explain
// Ranking" writes each result's sort keys to the output channel.
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
  State,
  StaticFeature,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
} from "vscode-languageclient/node";
import { findExecutable, installServer, installedServer } from "./install";

let client: LanguageClient | undefined;
/** Settles when the latest startServer() is done (started, or given up). */
let starting: Promise<void> = Promise.resolve();
let lastFocus: string | undefined;
let output: vscode.LogOutputChannel;
let status: vscode.StatusBarItem;

interface Position {
  line: number;
  character: number;
}

interface WorkspaceSymbolAnswer {
  name: string;
  kind: number;
  containerName?: string;
  location: { uri: string; range?: { start: Position; end: Position } };
  data?: unknown;
}

const ICONS: Record<number, string> = {
  2: "symbol-module", 3: "symbol-namespace", 4: "symbol-package", 5: "symbol-class",
  6: "symbol-method", 7: "symbol-property", 8: "symbol-field", 9: "symbol-constructor",
  10: "symbol-enum", 11: "symbol-interface", 12: "symbol-function", 13: "symbol-variable",
  14: "symbol-constant", 22: "symbol-enum-member", 23: "symbol-struct", 24: "symbol-event",
  25: "symbol-operator",
};

function icon(kind: number): string {
  return ICONS[kind] ?? "symbol-misc";
}

function showState(text: string, tooltip: string): void {
  status.text = text;
  status.tooltip = tooltip;
  status.show();
}

function focus(editor: vscode.TextEditor | undefined): void {
  if (!client || !client.isRunning() || !editor || editor.document.uri.scheme !== "file") {
    return;
  }
  const uri = editor.document.uri.toString();
  if (uri === lastFocus) {
    return;
  }
  lastFocus = uri;
  void client.sendNotification("nearsym/didFocus", { textDocument: { uri } });
}

function settings(): Record<string, unknown> {
  const config = vscode.workspace.getConfiguration("nearsym");
  return {
    maxResults: config.get("maxResults"),
    exclude: config.get("exclude"),
    maxFileBytes: config.get("maxFileBytes"),
    followSymlinks: config.get("followSymlinks"),
    languages: config.get("languages"),
    cache: config.get("cache"),
    sharedIndex: config.get("sharedIndex"),
    sharedIndexBudgetMs: config.get("sharedIndexBudgetMs"),
    dependencies: config.get("dependencies"),
  };
}

/** The location to open for `symbol`: its range, resolved first when the
 * server left it out (a WorkspaceSymbol with a URI only, LSP 3.17). nearsym
 * always sends the range; this keeps the picker right with a server that
 * does not. */
async function locationOf(symbol: WorkspaceSymbolAnswer): Promise<{ uri: string; start: Position }> {
  let location = symbol.location;
  if (!location.range && client) {
    try {
      const resolved = await client.sendRequest<WorkspaceSymbolAnswer | null>("workspaceSymbol/resolve", symbol);
      if (resolved?.location) {
        location = resolved.location;
      }
    } catch (error) {
      output.appendLine(`workspaceSymbol/resolve failed: ${String(error)}`);
    }
  }
  return { uri: location.uri, start: location.range?.start ?? { line: 0, character: 0 } };
}

async function goToSymbol(): Promise<void> {
  await starting;
  if (!client) {
    void offerInstall();
    return;
  }
  if (!client.isRunning()) {
    void vscode.window.showErrorMessage("nearsym's server is not running: see the nearsym output", "Show Output")
      .then((answer) => answer && output.show());
    return;
  }
  const running = client;
  const pick = vscode.window.createQuickPick<vscode.QuickPickItem & { symbol: WorkspaceSymbolAnswer }>();
  pick.placeholder = "Symbol (nearsym: nearest first)";
  // VS Code filters and re-sorts a quick pick by how its *labels* match the
  // typed text, and the stable API cannot turn that off. So the label is
  // only the kind's icon (it never matches), the name is in the description
  // (not matched), and every item is `alwaysShow`: the quick pick then keeps
  // the order it was given, which is nearsym's.
  pick.matchOnDescription = false;
  pick.matchOnDetail = false;
  let generation = 0;
  let pending: vscode.CancellationTokenSource | undefined;
  const update = async (query: string) => {
    const mine = ++generation;
    pending?.cancel();
    const cancel = (pending = new vscode.CancellationTokenSource());
    pick.busy = true;
    const active = vscode.window.activeTextEditor?.document.uri;
    let answer: WorkspaceSymbolAnswer[] | null = null;
    try {
      answer = await running.sendRequest<WorkspaceSymbolAnswer[] | null>(
        "workspace/symbol",
        {
          query,
          ...(active && active.scheme === "file" ? { textDocument: { uri: active.toString() } } : {}),
        },
        cancel.token,
      );
    } catch {
      // cancelled by the next keystroke, or the server went away
    }
    if (mine !== generation) {
      return;
    }
    pick.items = (answer ?? []).map((symbol) => {
      const line = symbol.location.range ? `:${symbol.location.range.start.line + 1}` : "";
      return {
        label: `$(${icon(symbol.kind)})`,
        description: symbol.containerName ? `${symbol.name}  ${symbol.containerName}` : symbol.name,
        detail: vscode.workspace.asRelativePath(vscode.Uri.parse(symbol.location.uri)) + line,
        alwaysShow: true,
        symbol,
      };
    });
    pick.busy = false;
  };
  pick.onDidChangeValue((value) => void update(value));
  pick.onDidAccept(async () => {
    const chosen = pick.selectedItems[0];
    pick.hide();
    if (!chosen) {
      return;
    }
    const { uri, start } = await locationOf(chosen.symbol);
    const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(uri));
    const position = new vscode.Position(start.line, start.character);
    await vscode.window.showTextDocument(document, {
      selection: new vscode.Range(position, position),
    });
  });
  pick.onDidHide(() => {
    pending?.cancel();
    pick.dispose();
  });
  pick.show();
  await update("");
}

interface ExplainAnswer {
  query: string;
  openFile: string | null;
  results: (WorkspaceSymbolAnswer & { keys: { key: string; value: unknown }[] })[];
}

/** "nearsym: Explain Ranking": asks for a query and writes to the output
 * channel why each result ranks where it does: the server's
 * `nearsym.explain` command, every sort key in the order it is compared.
 * (Sent as a request: the language client registers the server's own
 * command name for itself.) */
async function explainRanking(): Promise<void> {
  await starting;
  if (!client || !client.isRunning()) {
    void vscode.window.showErrorMessage("nearsym's server is not running: see the nearsym output");
    return;
  }
  const query = await vscode.window.showInputBox({ prompt: "nearsym: explain the ranking of" });
  if (query === undefined) {
    return;
  }
  const active = vscode.window.activeTextEditor?.document.uri;
  const uri = active && active.scheme === "file" ? active.toString() : null;
  try {
    const answer = await client.sendRequest<ExplainAnswer>("workspace/executeCommand", {
      command: "nearsym.explain",
      arguments: [query, uri, 20],
    });
    output.appendLine(`explain ${JSON.stringify(query)} from ${answer.openFile ?? "no open file"}`);
    answer.results.forEach((row, i) => {
      const line = row.location.range ? `:${row.location.range.start.line + 1}` : "";
      const where = vscode.workspace.asRelativePath(vscode.Uri.parse(row.location.uri)) + line;
      const owner = row.containerName ? `${row.containerName}.` : "";
      output.appendLine(`${i + 1}. ${owner}${row.name}  ${where}`);
      output.appendLine("   " + row.keys.map(({ key, value }) => `${key}=${String(value)}`).join("  "));
    });
    output.show(true);
  } catch (error) {
    output.appendLine(`nearsym.explain failed: ${String(error)}`);
  }
}

/** Shows the server's indexing progress in the status bar: the client's own
 * handler for window/workDoneProgress/create is replaced (features added
 * with registerFeature initialize after the built-in ones, before any
 * message from the server is read). */
class StatusProgress implements StaticFeature {
  constructor(private readonly languageClient: LanguageClient) {}
  fillClientCapabilities(capabilities: { window?: { workDoneProgress?: boolean } }): void {
    capabilities.window = { ...capabilities.window, workDoneProgress: true };
  }
  getState(): { kind: "static" } {
    return { kind: "static" };
  }
  initialize(): void {
    const lc = this.languageClient;
    lc.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
      let title = "indexing";
      const done = lc.onProgress(WorkDoneProgress.type, token, (value) => {
        if (value.kind === "begin") {
          title = value.title;
        }
        if (value.kind === "end") {
          done.dispose();
          showState("$(check) nearsym", `nearsym: ${value.message ?? "ready"}`);
          if (value.message) {
            output.appendLine(value.message);
          }
          return;
        }
        const share = value.percentage !== undefined ? ` ${value.percentage}%` : "";
        showState(`$(sync~spin) nearsym${share}`, `nearsym: ${title} ${value.message ?? ""}`.trim());
      });
    });
  }
  clear(): void {}
}

/** The server command: `nearsym.command` when set, else `nearsym` on PATH,
 * else the one "Install nearsym" put in the extension's storage. */
async function serverCommand(context: vscode.ExtensionContext): Promise<string[] | undefined> {
  const configured = vscode.workspace.getConfiguration("nearsym").get<string[]>("command") ?? [];
  if (configured.length > 0) {
    return configured;
  }
  const onPath = await findExecutable("nearsym");
  if (onPath) {
    return [onPath, "serve"];
  }
  const installed = await installedServer(context.globalStorageUri.fsPath);
  return installed ? [installed, "serve"] : undefined;
}

function startServer(context: vscode.ExtensionContext): Promise<void> {
  starting = starting
    .then(() => restartServer(context))
    .catch((error) => output.appendLine(`nearsym: ${String(error)}`));
  return starting;
}

async function restartServer(context: vscode.ExtensionContext): Promise<void> {
  if (client) {
    const old = client;
    client = undefined;
    await old.stop().catch(() => undefined);
  }
  lastFocus = undefined;
  const command = await serverCommand(context);
  if (!command) {
    showState("$(warning) nearsym: not installed", "No `nearsym` on PATH: run nearsym: Install nearsym");
    status.command = "nearsym.install";
    void offerInstall();
    return;
  }
  status.command = "nearsym.showOutput";
  output.appendLine(`starting ${command.join(" ")}`);
  const serverOptions: ServerOptions = { command: command[0], args: command.slice(1) };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }],
    initializationOptions: settings(),
    outputChannel: output,
  };
  const lc = new LanguageClient("nearsym", "nearsym", serverOptions, clientOptions);
  lc.registerFeature(new StatusProgress(lc));
  lc.onDidChangeState(({ newState }) => {
    if (newState === State.Starting) {
      showState("$(sync~spin) nearsym", "nearsym: starting");
    } else if (newState === State.Stopped) {
      showState("$(error) nearsym: stopped", "nearsym's server stopped: see its output");
    } else if (status.text.includes("starting") || status.text === "$(sync~spin) nearsym") {
      showState("$(check) nearsym", "nearsym: running");
    }
  });
  client = lc;
  try {
    await lc.start();
  } catch (error) {
    output.appendLine(`nearsym did not start: ${String(error)}`);
    showState("$(error) nearsym: stopped", `nearsym did not start: ${String(error)}`);
    return;
  }
  focus(vscode.window.activeTextEditor);
}

let offering = false;

async function offerInstall(): Promise<void> {
  if (offering) {
    return;
  }
  offering = true;
  try {
    const answer = await vscode.window.showInformationMessage(
      "nearsym's server is not installed (no `nearsym` on PATH and `nearsym.command` not set).",
      "Install nearsym",
    );
    if (answer === "Install nearsym") {
      await vscode.commands.executeCommand("nearsym.install");
    }
  } finally {
    offering = false;
  }
}

async function install(context: vscode.ExtensionContext): Promise<void> {
  output.show(true);
  showState("$(sync~spin) nearsym: installing", "Installing nearsym");
  try {
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: "Installing nearsym" },
      (progress) =>
        installServer({
          storage: context.globalStorageUri.fsPath,
          wheels: vscode.Uri.joinPath(context.extensionUri, "server").fsPath,
          log: (line) => output.appendLine(line),
          step: (message) => progress.report({ message }),
          folder: vscode.workspace.workspaceFolders?.[0]?.uri,
        }),
    );
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    output.appendLine(message);
    showState("$(error) nearsym: not installed", message);
    void vscode.window.showErrorMessage(`nearsym was not installed: ${message}`);
    return;
  }
  await startServer(context);
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  output = vscode.window.createOutputChannel("nearsym", { log: true });
  status = vscode.window.createStatusBarItem("nearsym.status", vscode.StatusBarAlignment.Left, 10);
  status.name = "nearsym";
  status.command = "nearsym.showOutput";
  context.subscriptions.push(
    output,
    status,
    vscode.window.onDidChangeActiveTextEditor(focus),
    vscode.commands.registerCommand("nearsym.goToSymbol", goToSymbol),
    vscode.commands.registerCommand("nearsym.explainRanking", explainRanking),
    vscode.commands.registerCommand("nearsym.install", () => install(context)),
    vscode.commands.registerCommand("nearsym.restart", () => startServer(context)),
    vscode.commands.registerCommand("nearsym.showOutput", () => output.show()),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("nearsym.command")) {
        void startServer(context);
      } else if (event.affectsConfiguration("nearsym") && client?.isRunning()) {
        void client.sendNotification("workspace/didChangeConfiguration", {
          settings: { nearsym: settings() },
        });
      }
    }),
  );
  await startServer(context);
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
