// Finding programs and a Python >= 3.11 on this machine. Plain Node (no
// `vscode` import), so tests/editors can run it outside VS Code.
import { spawn } from "node:child_process";
import { constants, promises as fs } from "node:fs";
import * as path from "node:path";

/** nearsym's `requires-python` (pyproject.toml). */
export const MINIMUM_PYTHON: [number, number] = [3, 11];

export const WINDOWS = process.platform === "win32";

/** The path of program `name` inside virtual environment `venv`. */
export function venvBin(venv: string, name: string): string {
  return WINDOWS ? path.join(venv, "Scripts", `${name}.exe`) : path.join(venv, "bin", name);
}

export async function isExecutable(file: string): Promise<boolean> {
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

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Run `command`, passing each line it prints to `onLine`. */
export function run(command: string[], onLine?: (line: string) => void): Promise<Run> {
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

/** The first Python >= 3.11 of `preferred` (e.g. the Python extension's
 * interpreter), then python3 (py -3 on Windows), then python on PATH.
 * Throws naming each one found and its version when none will do. */
export async function findPython(preferred: string[][] = []): Promise<string[]> {
  const candidates = [...preferred];
  for (const name of WINDOWS ? ["py", "python"] : ["python3", "python"]) {
    const found = await findExecutable(name);
    if (found) {
      candidates.push(name === "py" ? [found, "-3"] : [found]);
    }
  }
  const seen: string[] = [];
  for (const python of candidates) {
    const probe = await run([...python, "-c", "import sys; print(sys.version_info[0], sys.version_info[1])"]);
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
