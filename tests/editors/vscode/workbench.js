// Drives VS Code's workbench (code-server) in headless Chromium: opens a file
// in one folder, runs Ctrl+T and nearsym's own quick pick for `register`,
// switches to a file in the other folder, and runs nearsym's pick again.
// Prints a JSON report on stdout.
//   node workbench.js URL WORKSPACE
const { chromium } = require("playwright-core");

const [url, ws] = process.argv.slice(2);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function rows(page) {
  await page.waitForSelector(".quick-input-list .monaco-list-row", { timeout: 20000 });
  await sleep(1500); // let the answer for the typed text arrive
  return page.$$eval(".quick-input-list .monaco-list-row", (els) =>
    els.map((el) => el.getAttribute("aria-label") || el.textContent || ""),
  );
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
    await sleep(8000); // extension host, nearsym start and index
    await page.click(".monaco-workbench");
    await openFile(page, "alpha/registry.py");

    await command(page, "nearsym: Go to Symbol in Workspace");
    await page.keyboard.type("register");
    report.nearsymAlpha = await rows(page);
    await page.keyboard.press("Escape");

    await page.keyboard.press("Control+T");
    await page.waitForSelector(".quick-input-widget", { state: "visible" });
    await page.keyboard.type("register");
    report.ctrlT = await rows(page);
    await page.keyboard.press("Escape");

    await openFile(page, "beta/registry.py");
    await command(page, "nearsym: Go to Symbol in Workspace");
    await page.keyboard.type("register");
    report.nearsymBeta = await rows(page);
    await page.keyboard.press("Escape");
    await page.screenshot({ path: `${ws}/../workbench.png` });
  } catch (error) {
    report.error = String(error);
  } finally {
    await browser.close();
  }
  console.log(JSON.stringify(report));
})();
