// Drives VS Code's workbench (code-server) in headless Chromium with the
// nearsym extension installed, and prints a JSON report on stdout.
//   node workbench.js URL WORKSPACE navigate
//     With alpha/registry.py open: nearsym's own pick and Ctrl+T for
//     `register`; Enter on Ctrl+T's `unregister` and on the pick's second
//     `register` (reached with the keybinding), and where the cursor lands;
//     `activate` in the open file; then nearsym's pick from beta/registry.py.
//   node workbench.js URL WORKSPACE install
//     With no server to start: the "Install nearsym" offer, clicked; the
//     status bar until the server runs; then nearsym's pick for `register`.
const { chromium } = require("playwright-core");

const [url, ws, mode] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const PICK = "nearsym: Go to Symbol in Workspace";

// The quick pick's rows once the answer for the typed text is in: the same
// rows read 5 times in a row, 500 ms apart (on a busy machine an answer
// can take over a second; an earlier answer's rows would pass otherwise).
async function rows(page) {
  await page.waitForSelector(".quick-input-list .monaco-list-row", { timeout: 20000 });
  let last = "";
  let same = 0;
  let current = [];
  for (let i = 0; i < 60 && same < 5; i++) {
    await sleep(500);
    current = await page.$$eval(".quick-input-list .monaco-list-row", (els) =>
      els.map((el) => el.getAttribute("aria-label") || el.textContent || ""),
    );
    const key = JSON.stringify(current);
    same = key === last && current.length > 0 ? same + 1 : 0;
    last = key;
  }
  return current;
}

async function openFile(page, rel) {
  await page.keyboard.press("Control+P");
  await page.waitForSelector(".quick-input-widget", { state: "visible" });
  await page.keyboard.type(rel);
  await sleep(1500);
  await page.keyboard.press("Enter");
  await sleep(2000);
}

async function command(page, title) {
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget", { state: "visible" });
  await page.keyboard.type(title);
  await sleep(1000);
  await page.keyboard.press("Enter");
  await sleep(500);
}

// Where the editor is: the active tab's file (its path relative to the
// workspace, from the tab's resource) and the cursor, as the status bar
// shows it ("Ln 9, Col 9").
async function where(page) {
  await sleep(1500);
  return page.evaluate(() => {
    const tab = document.querySelector(".tabs-container .tab.active");
    const name = tab ? tab.getAttribute("data-resource-name") : null;
    // The breadcrumbs read "alpha > registry.py > ...": the file's path in
    // the workspace, then the symbols in it.
    const crumbs = Array.from(
      document.querySelectorAll(".breadcrumbs-control .monaco-breadcrumb-item"),
    ).map((el) => el.textContent.trim());
    const end = crumbs.indexOf(name);
    const selection = document.querySelector('[id="status.editor.selection"]');
    return {
      file: end >= 0 ? crumbs.slice(0, end + 1).join("/") : name,
      crumbs,
      cursor: selection ? selection.textContent.trim() : null,
    };
  });
}

async function statusText(page) {
  return page.$$eval(".statusbar-item", (els) =>
    els.map((el) => el.textContent.trim()).filter((t) => t.includes("nearsym")),
  );
}

// Waits until nearsym's status bar item reads `text` (at most `ms`), and
// returns every text it showed meanwhile.
async function statusUntil(page, wanted, ms) {
  const started = Date.now();
  const seen = new Set();
  while (Date.now() - started < ms) {
    const texts = await statusText(page);
    texts.forEach((t) => seen.add(t));
    if (texts.some(wanted)) {
      break;
    }
    await sleep(250);
  }
  return Array.from(seen);
}

// The check icon renders as an empty span: the ready item reads "nearsym".
const READY = (t) => t === "nearsym";

async function navigate(page, report) {
  // extension host, nearsym's start and first index
  report.status = await statusUntil(page, READY, 120000);
  await page.click(".monaco-workbench");
  await openFile(page, "alpha/registry.py");

  await command(page, PICK);
  await page.keyboard.type("register");
  report.nearsymAlpha = await rows(page);
  await page.keyboard.press("Escape");

  await page.keyboard.press("Control+T");
  await page.waitForSelector(".quick-input-widget", { state: "visible" });
  await page.keyboard.type("register");
  report.ctrlT = await rows(page);
  await page.keyboard.press("Escape");

  // Ctrl+T, Enter: VS Code's own picker opens the definition.
  await page.keyboard.press("Control+T");
  await page.waitForSelector(".quick-input-widget", { state: "visible" });
  await page.keyboard.type("unregister");
  report.ctrlTUnregister = await rows(page);
  await page.keyboard.press("Enter");
  report.ctrlTLanded = await where(page);

  // The pick from its keybinding; Enter on the second `register`.
  await openFile(page, "alpha/registry.py");
  await page.keyboard.press("Control+Shift+Alt+T");
  await page.waitForSelector(".quick-input-widget", { state: "visible" });
  await page.keyboard.type("register");
  report.keyPick = await rows(page);
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  report.pickLanded = await where(page);

  // The pick from the command palette, Enter on a method of the open file.
  await openFile(page, "alpha/registry.py");
  await command(page, PICK);
  await page.keyboard.type("activate");
  report.pickActivate = await rows(page);
  await page.keyboard.press("Enter");
  report.activateLanded = await where(page);

  await openFile(page, "beta/registry.py");
  await command(page, PICK);
  await page.keyboard.type("register");
  report.nearsymBeta = await rows(page);
  await page.keyboard.press("Escape");
}

async function install(page, report) {
  // The offer appears as a notification once the extension finds no server.
  const button = page.locator(".notifications-toasts .monaco-button", { hasText: "Install nearsym" });
  await button.first().waitFor({ timeout: 60000 });
  report.offer = await page.$$eval(".notifications-toasts .notification-list-item-message", (els) =>
    els.map((el) => el.textContent.trim()),
  );
  report.statusBefore = await statusText(page);
  await button.first().click();
  const started = Date.now();
  report.statusSeen = await statusUntil(
    page,
    (t) => READY(t) || (t.includes("not installed") && Date.now() - started > 5000),
    400000,
  );
  report.installSeconds = (Date.now() - started) / 1000;
  report.errors = await page.$$eval(".notifications-toasts .notification-list-item-message", (els) =>
    els.map((el) => el.textContent.trim()),
  );
  await page.click(".monaco-workbench");
  await openFile(page, "alpha/registry.py");
  await command(page, PICK);
  await page.keyboard.type("register");
  report.nearsymAlpha = await rows(page);
  await page.keyboard.press("Escape");
}

(async () => {
  const browser = await chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
  const report = {};
  try {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${url}/?folder=${encodeURIComponent(ws)}`);
    await page.waitForSelector(".monaco-workbench", { timeout: 90000 });
    await (mode === "install" ? install : navigate)(page, report);
    await page.screenshot({ path: `${ws}/../workbench-${mode}.png` });
  } catch (error) {
    report.error = String(error);
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(report));
})();
