// Drives one headless Chromium tab over the DevTools protocol (node --experimental-websocket): opens the
// presenter link, then presses PageDown three times as a presenter remote does, and prints what the page
// shows as JSON: {"url", "before", "after", "keys", "errors"}. Used by Scripts/system/console-clicker.
const [, , debugPort, url] = process.argv;
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
const text = (elementId) => value(`(document.getElementById(${JSON.stringify(elementId)}) || {}).textContent || null`);
async function until(check, ms) { for (let t = 0; t < ms; t += 100) { if (await check()) return true; await sleep(100); } return false; }

await send("Runtime.enable"); await send("Log.enable"); await send("Page.enable");
await send("Page.navigate", { url });
await until(async () => (await text("slide-text")) !== null, 10000);
const before = await text("slide-text");
for (let press = 0; press < 3; press++) {
  for (const type of ["keyDown", "keyUp"]) await send("Input.dispatchKeyEvent", { type, key: "PageDown", code: "PageDown", windowsVirtualKeyCode: 34, nativeVirtualKeyCode: 34 });
  await sleep(250);
}
await until(async () => (await text("slide-text")) === process.env.EXPECT_AFTER, 5000);
console.log(JSON.stringify({ url: await value("location.href"), before, after: await text("slide-text"), keys: await text("keys-text"), errors }));
ws.close();
process.exit(0);
