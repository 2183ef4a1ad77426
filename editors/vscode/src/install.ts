// Installing nearsym's server for the person: a virtual environment in the
// extension's global storage, made with the Python they have (the Python
// extension's selected interpreter when it is there, else python3 on PATH),
// and nearsym's own wheel, which the .vsix carries; pip brings its
// dependencies from the package index the person's pip is set up for.
import { promises as fs } from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";
import { findExecutable, findPython, isExecutable, run, venvBin } from "./python";

export { findExecutable };

/** The `nearsym` an earlier install put in `storage`, if any. */
export async function installedServer(storage: string): Promise<string | undefined> {
  const server = venvBin(path.join(storage, "venv"), "nearsym");
  return (await isExecutable(server)) ? server : undefined;
}

interface PythonApi {
  environments?: {
    getActiveEnvironmentPath(resource?: vscode.Uri): { path: string };
    resolveEnvironment(env: { path: string } | string): Promise<
      { executable?: { uri?: vscode.Uri } } | undefined
    >;
  };
}

/** The interpreter the Python extension has selected for `folder`, if it is
 * installed and says. */
async function pythonExtensionInterpreter(folder?: vscode.Uri): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension<PythonApi>("ms-python.python");
  if (!extension) {
    return undefined;
  }
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    const active = api.environments?.getActiveEnvironmentPath(folder);
    if (!active) {
      return undefined;
    }
    const resolved = await api.environments?.resolveEnvironment(active);
    return resolved?.executable?.uri?.fsPath ?? active.path;
  } catch {
    return undefined;
  }
}

export interface InstallOptions {
  /** The extension's global storage folder: the venv goes in `venv/`. */
  storage: string;
  /** The folder in the extension that holds nearsym's wheel. */
  wheels: string;
  log: (line: string) => void;
  /** A short message for the progress notification. */
  step: (message: string) => void;
  folder?: vscode.Uri;
}

/** Create the venv, pip-install nearsym's wheel into it, and return the
 * path of its `nearsym`. Throws with a message meant for the person. */
export async function installServer(options: InstallOptions): Promise<string> {
  const { storage, log, step } = options;
  step("looking for Python");
  const selected = await pythonExtensionInterpreter(options.folder);
  const python = await findPython(selected ? [[selected]] : []);
  log(`Python: ${python.join(" ")}`);
  const wheel = (await fs.readdir(options.wheels).catch(() => [] as string[]))
    .filter((name) => name.startsWith("nearsym-") && name.endsWith(".whl"))
    .sort()
    .pop();
  if (!wheel) {
    throw new Error(`this build of the extension carries no nearsym wheel (in ${options.wheels})`);
  }
  const venv = path.join(storage, "venv");
  await fs.mkdir(storage, { recursive: true });
  await fs.rm(venv, { recursive: true, force: true });
  step("creating a virtual environment");
  log(`creating ${venv}`);
  const made = await run([...python, "-m", "venv", venv], log);
  if (made.code !== 0) {
    throw new Error(
      `${python.join(" ")} -m venv failed: ${made.stderr.trim() || made.stdout.trim()}` +
        " (on Debian and Ubuntu, install the python3-venv package)",
    );
  }
  step("installing nearsym and its dependencies");
  const pip = await run(
    [venvBin(venv, "python"), "-m", "pip", "install", "--disable-pip-version-check", path.join(options.wheels, wheel)],
    (line) => {
      log(line);
      const collecting = /^Collecting (\S+)/.exec(line);
      if (collecting) {
        step(`installing ${collecting[1]}`);
      }
    },
  );
  if (pip.code !== 0) {
    const tail = pip.stderr.trim().split("\n").slice(-3).join(" ");
    throw new Error(`pip could not install nearsym: ${tail} (the whole log is in the nearsym output)`);
  }
  const server = await installedServer(storage);
  if (!server) {
    throw new Error(`pip finished but ${venvBin(venv, "nearsym")} is missing`);
  }
  log(`installed ${server}`);
  return server;
}
