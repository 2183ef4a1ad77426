// nearsym for VS Code: starts `nearsym serve`, tells it which editor is
// active (nearsym/didFocus), and offers "nearsym: Go to Symbol in Workspace",
// a quick pick that keeps nearsym's order. VS Code's own Ctrl+T re-sorts
// every provider's results by its fuzzy score and shows same-named symbols
// in URI order, which throws away the closeness to the open file.
import * as vscode from "vscode";
import {
  LanguageClient,
  LanguageClientOptions,
  ServerOptions,
} from "vscode-languageclient/node";

let client: LanguageClient | undefined;
let lastFocus: string | undefined;

interface WorkspaceSymbolAnswer {
  name: string;
  kind: number;
  containerName?: string;
  location: { uri: string; range?: { start: { line: number; character: number } } };
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

function focus(editor: vscode.TextEditor | undefined): void {
  if (!client || !editor || editor.document.uri.scheme !== "file") {
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
  };
}

async function goToSymbol(): Promise<void> {
  if (!client) {
    return;
  }
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
  const update = async (query: string) => {
    const mine = ++generation;
    pick.busy = true;
    const active = vscode.window.activeTextEditor?.document.uri;
    const answer = (await client!.sendRequest("workspace/symbol", {
      query,
      ...(active && active.scheme === "file" ? { textDocument: { uri: active.toString() } } : {}),
    })) as WorkspaceSymbolAnswer[] | null;
    if (mine !== generation) {
      return;
    }
    pick.items = (answer ?? []).map((symbol) => ({
      label: `$(${icon(symbol.kind)})`,
      description: symbol.containerName ? `${symbol.name}  ${symbol.containerName}` : symbol.name,
      detail: vscode.workspace.asRelativePath(vscode.Uri.parse(symbol.location.uri)),
      alwaysShow: true,
      symbol,
    }));
    pick.busy = false;
  };
  pick.onDidChangeValue((value) => void update(value));
  pick.onDidAccept(async () => {
    const chosen = pick.selectedItems[0];
    pick.hide();
    if (!chosen) {
      return;
    }
    const location = chosen.symbol.location;
    const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(location.uri));
    const start = location.range?.start ?? { line: 0, character: 0 };
    const position = new vscode.Position(start.line, start.character);
    await vscode.window.showTextDocument(document, { selection: new vscode.Range(position, position) });
  });
  pick.onDidHide(() => pick.dispose());
  pick.show();
  await update("");
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const command = vscode.workspace.getConfiguration("nearsym").get<string[]>("command") ?? ["nearsym", "serve"];
  const serverOptions: ServerOptions = { command: command[0], args: command.slice(1) };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }],
    initializationOptions: settings(),
  };
  client = new LanguageClient("nearsym", "nearsym", serverOptions, clientOptions);
  await client.start();
  context.subscriptions.push(
    vscode.window.onDidChangeActiveTextEditor(focus),
    vscode.commands.registerCommand("nearsym.goToSymbol", goToSymbol),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("nearsym") && client) {
        void client.sendNotification("workspace/didChangeConfiguration", {
          settings: { nearsym: settings() },
        });
      }
    }),
  );
  focus(vscode.window.activeTextEditor);
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
