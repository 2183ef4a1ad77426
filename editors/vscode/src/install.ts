// Installing nearsym's server for the person: a virtual environment in the
// extension's global storage, made with the Python they have (the Python
// extension's selected interpreter when it is there, else python3 on PATH),
// and nearsym's own wheel, which the .vsix carries; pip brings its
// dependencies from the package index the person's pip is set up for.
import { spawn } from "node:child_process";
import { constants, promises as fs } from "node:fs";
import * as path from "node:path";
import * as vscode from "vscode";

/** nearsym's `requires-python` (pyproject.toml). */
const MINIMUM_PYTHON: [number, number] = [3, 11];

const WINDOWS = process.platform === "win32";

function venvBin(venv: string, name: string): string {
  return WINDOWS ? path.join(venv, "Scripts", `${name}.exe`) : path.join(venv, "bin", name);
}

async function isExecutable(file: string): Promise<boolean> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) {
      return false;
    }
    await fs.access(file, WINDOWS ? constants.F_OK : constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** `name` looked up on PATH (with PATHEXT on Windows), as `which` does. */
export async function findExecutable(name: string): Promise<string | undefined> {
  const extensions = WINDOWS ? (process.env.PATHEXT ?? ".EXE;.CMD;.BAT").split(";") : [""];
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    if (!dir) {
      continue;
    }
    for (const extension of extensions) {
      const candidate = path.join(dir, name + extension);
      if (await isExecutable(candidate)) {
        return candidate;
      }
    }
  }
  return undefined;
}

/** The `nearsym` an earlier install put in `storage`, if any. */
export async function installedServer(storage: string): Promise<string | undefined> {
  const server = venvBin(path.join(storage, "venv"), "nearsym");
  return (await isExecutable(server)) ? server : undefined;
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string[], onLine?: (line: string) => void): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(command[0], command.slice(1), { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let partial = "";
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
      if (onLine) {
        const lines = (partial + chunk.toString()).split(/\r?\n/);
        partial = lines.pop() ?? "";
        lines.filter((line) => line.trim()).forEach(onLine);
      }
    });
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
      onLine?.(chunk.toString().trimEnd());
    });
    child.on("error", (error) => resolve({ code: null, stdout, stderr: String(error) }));
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
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

/** A Python >= 3.11 the person has: the Python extension's interpreter,
 * else python3 (py -3 on Windows), else python. Throws naming each one
 * found and its version when none will do. */
export async function findPython(folder?: vscode.Uri): Promise<string[]> {
  const candidates: string[][] = [];
  const selected = await pythonExtensionInterpreter(folder);
  if (selected) {
    candidates.push([selected]);
  }
  for (const name of WINDOWS ? ["py", "python"] : ["python3", "python"]) {
    const found = await findExecutable(name);
    if (found) {
      candidates.push(name === "py" ? [found, "-3"] : [found]);
    }
  }
  const seen: string[] = [];
  for (const python of candidates) {
    const probe = await run([
      ...python,
      "-c",
      "import sys; print(sys.version_info[0], sys.version_info[1])",
    ]);
    const [major, minor] = probe.stdout.trim().split(" ").map(Number);
    if (probe.code !== 0 || Number.isNaN(minor)) {
      seen.push(`${python.join(" ")} (did not run)`);
      continue;
    }
    if (major > MINIMUM_PYTHON[0] || (major === MINIMUM_PYTHON[0] && minor >= MINIMUM_PYTHON[1])) {
      return python;
    }
    seen.push(`${python.join(" ")} is Python ${major}.${minor}`);
  }
  const wanted = `Python ${MINIMUM_PYTHON.join(".")} or newer`;
  throw new Error(
    seen.length > 0
      ? `nearsym needs ${wanted}; found only: ${seen.join("; ")}. Install one, or select it in the Python extension, then run "nearsym: Install nearsym" again.`
      : `nearsym needs ${wanted}, and there is no python3 on PATH (nor a Python extension interpreter). Install one, then run "nearsym: Install nearsym" again.`,
  );
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
  const python = await findPython(options.folder);
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
