// Drives one headless Chromium tab over the DevTools protocol (node --experimental-websocket) through the
// pages branch's console pages as an admin: signs in with the presenter link's form, mints a device code on
// "Companion app devices" (the screenshot of that answer is what zbarimg decodes), then opens devices, live
// view, report and audit, saving a screenshot of each at desktop and phone width, light and dark. Prints
// JSON: {"minted", "pages": {name: {status, title}}, "errors"}. Used by Scripts/system/console-pages.
import { writeFileSync } from "node:fs";
const [, , debugPort, base, token, outDir] = process.argv;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const list = await (await fetch(`http://127.0.0.1:${debugPort}/json/list`)).json();
const ws = new WebSocket(list.find((t) => t.type === "page").webSocketDebuggerUrl);
await new Promise((r) => (ws.onopen = r));
let id = 0;
const waiting = new Map();
const errors = [];
ws.onmessage = (message) => {
  const data = JSON.parse(message.data);
  if (data.id && waiting.has(data.id)) { waiting.get(data.id)(data); waiting.delete(data.id); }
  if (data.method === "Runtime.exceptionThrown") errors.push(JSON.stringify(data.params.exceptionDetails).slice(0, 300));
  if (data.method === "Log.entryAdded" && data.params.entry.level === "error") errors.push(data.params.entry.text.slice(0, 300));
  if (data.method === "Runtime.consoleAPICalled" && data.params.type === "error") errors.push(JSON.stringify(data.params.args).slice(0, 300));
  if (data.method === "Page.javascriptDialogOpening") errors.push("dialog: " + data.params.message);
};
const send = (method, params = {}) => new Promise((r) => { const i = ++id; waiting.set(i, r); ws.send(JSON.stringify({ id: i, method, params })); });
const value = async (expression) => (await send("Runtime.evaluate", { expression, returnByValue: true })).result.result.value;
async function until(check, ms) { for (let t = 0; t < ms; t += 100) { if (await check()) return true; await sleep(100); } return false; }
async function load(url) {
  await send("Page.navigate", { url });
  await until(async () => (await value("document.readyState")) === "complete", 10000);
  await sleep(300);
}
async function shoot(name) {
  for (const [width, height, label] of [[1280, 900, "desktop"], [390, 844, "phone"]]) {
    for (const scheme of ["light", "dark"]) {
      await send("Emulation.setDeviceMetricsOverride", { width, height, deviceScaleFactor: 1, mobile: label === "phone" });
      await send("Emulation.setEmulatedMedia", { features: [{ name: "prefers-color-scheme", value: scheme }] });
      await sleep(150);
      const shot = await send("Page.captureScreenshot", { format: "png", captureBeyondViewport: true });
      writeFileSync(`${outDir}/${name}-${label}-${scheme}.png`, Buffer.from(shot.result.data, "base64"));
    }
  }
  await send("Emulation.setDeviceMetricsOverride", { width: 1280, height: 900, deviceScaleFactor: 1, mobile: false });
}

await send("Runtime.enable"); await send("Log.enable"); await send("Page.enable");
await load(`${base}/console/present#${token}`);
await until(async () => (await value("location.pathname")) === "/console/sessions", 10000);

await load(`${base}/console/companion`);
await value(`document.querySelector('input[name="do"][value="code"]').form.requestSubmit()`);
await until(async () => (await value("document.querySelector('.minted') !== null")) === true, 10000);
await sleep(300);
const minted = await value(`[...document.querySelectorAll('.minted .secret')].map((e) => e.textContent).pop() || null`);
// The QR code alone, at a scale a camera would see, for zbarimg.
await send("Emulation.setEmulatedMedia", { features: [{ name: "prefers-color-scheme", value: "dark" }] });
const box = await value(`(() => { const r = document.querySelector('.qr svg').getBoundingClientRect(); return [r.x, r.y + window.scrollY, r.width, r.height]; })()`);
const qr = await send("Page.captureScreenshot", { format: "png", captureBeyondViewport: true, clip: { x: box[0], y: box[1], width: box[2], height: box[3], scale: 2 } });
writeFileSync(`${outDir}/qr.png`, Buffer.from(qr.result.data, "base64"));
await shoot("companion-minted");

const pages = {};
for (const [name, path] of [["companion", "/console/companion"], ["devices", "/console/devices"], ["live", "/console/sessions/keynote/live"],
                            ["report", "/console/sessions/keynote/report"], ["audit", "/console/audit"]]) {
  await load(base + path);
  pages[name] = { title: await value("document.title"), h1: await value("(document.querySelector('h1') || {}).textContent || null") };
  if (name === "live") {
    // The shell posts a diag sample with an RTT of 123 ms every second: the row must change without a reload.
    const rows = "(document.getElementById('live-rows') || {}).textContent || ''";
    pages[name].before = (await value(rows)).includes("123 ms");
    writeFileSync(`${process.env.LIVE_MARKER}`, "open\n");
    pages[name].updated = await until(async () => (await value(rows)).includes("123 ms"), 10000);
    pages[name].announce = await value("(document.getElementById('live-announce') || {}).textContent || null");
  }
  await shoot(name);
}
console.log(JSON.stringify({ minted, pages, errors }));
ws.close();
process.exit(0);
