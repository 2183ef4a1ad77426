// Builds nearsym's own wheel into server/, so the .vsix carries it and
// "nearsym: Install nearsym" needs only the package index for nearsym's
// dependencies. Runs as part of `vscode:prepublish` (so `vsce package`).
// The source is copied to a temporary folder first, so the build leaves
// nothing in the repository. NEARSYM_SOURCE names the repository when this
// folder is not inside it (default: ../..); PYTHON the interpreter (python3).
"use strict";
const { execFileSync } = require("node:child_process");
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const here = path.resolve(__dirname, "..");
const source = path.resolve(process.env.NEARSYM_SOURCE || path.join(here, "..", ".."));
const python = process.env.PYTHON || (process.platform === "win32" ? "python" : "python3");
const out = path.join(here, "server");

if (!fs.existsSync(path.join(source, "pyproject.toml"))) {
  console.error(`bundle-server: no pyproject.toml in ${source} (set NEARSYM_SOURCE)`);
  process.exit(1);
}
const work = fs.mkdtempSync(path.join(os.tmpdir(), "nearsym-wheel-"));
try {
  for (const name of ["pyproject.toml", "README.md", "LICENSE"]) {
    fs.copyFileSync(path.join(source, name), path.join(work, name));
  }
  fs.cpSync(path.join(source, "server"), path.join(work, "server"), {
    recursive: true,
    filter: (file) => !/(__pycache__|\.egg-info)$/.test(file),
  });
  fs.rmSync(out, { recursive: true, force: true });
  execFileSync(python, ["-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", out, work], {
    stdio: "inherit",
  });
} finally {
  fs.rmSync(work, { recursive: true, force: true });
}
const wheels = fs.readdirSync(out).filter((name) => name.endsWith(".whl"));
if (wheels.length !== 1) {
  console.error(`bundle-server: expected one wheel in ${out}, found ${wheels.join(", ") || "none"}`);
  process.exit(1);
}
console.log(`bundle-server: ${path.join("server", wheels[0])}`);
