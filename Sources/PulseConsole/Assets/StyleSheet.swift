/// The console's one stylesheet, served at a hashed immutable URL (`ConsoleAssets`). Readable at arm's
/// length on a projector-lit stage: large type, strong contrast, light and dark schemes from
/// `prefers-color-scheme`, a visible focus ring, hit targets of at least 48 px, one column at phone width.
enum StyleSheet {
    static let text = #"""
:root {
  color-scheme: light dark;
  --bg: #f7f7f5; --fg: #111418; --muted: #4a5360; --panel: #ffffff; --line: #c9ced6;
  --accent: #0b57d0; --accent-fg: #ffffff; --danger: #b3261e; --danger-fg: #ffffff;
  --ok: #146c2e; --warn: #8a5300; --focus: #ffbf00; --notice: #e6f0ff; --error: #fde7e6;
  font-size: 112.5%;
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #101317; --fg: #eef1f5; --muted: #b3bcc8; --panel: #1b2027; --line: #3a434f;
    --accent: #8ab4ff; --accent-fg: #0b1320; --danger: #ffb4ab; --danger-fg: #370b07;
    --ok: #7fd99a; --warn: #f2c46d; --focus: #ffd54a; --notice: #15263f; --error: #3d1714;
  }
}
* { box-sizing: border-box; }
html { background: var(--bg); color: var(--fg); }
body {
  margin: 0; font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", sans-serif;
  line-height: 1.45; background: var(--bg); color: var(--fg);
}
a { color: var(--accent); text-underline-offset: 0.15em; }
:focus-visible { outline: 4px solid var(--focus); outline-offset: 3px; }
.skip { position: absolute; left: -9999px; }
.skip:focus { left: 1rem; top: 1rem; z-index: 2; background: var(--panel); padding: 0.75rem 1rem; }

.top {
  display: flex; flex-wrap: wrap; align-items: center; gap: 0.75rem 1rem;
  padding: 0.75rem 1.25rem; background: var(--panel); border-bottom: 2px solid var(--line);
}
.event { font-size: 1.25rem; font-weight: 700; margin: 0; }
.top nav ul { display: flex; flex-wrap: wrap; gap: 0.25rem 0.5rem; list-style: none; margin: 0; padding: 0; }
.top nav a {
  display: inline-flex; align-items: center; min-height: 48px; padding: 0 0.7rem; border-radius: 8px;
  font-weight: 600; text-decoration: none; color: var(--fg);
}
.top nav a[aria-current="page"] { background: var(--accent); color: var(--accent-fg); }
.top nav a:hover { text-decoration: underline; }
.who { margin-left: auto; display: flex; align-items: center; gap: 0.75rem; color: var(--muted); }
.who form { margin: 0; }

main { max-width: 72rem; margin: 0 auto; padding: 1.25rem; }
h1 { font-size: 2rem; line-height: 1.2; margin: 0.5rem 0 1rem; }
h2 { font-size: 1.4rem; margin: 2rem 0 0.75rem; }
p { max-width: 48rem; }
.muted { color: var(--muted); }

.notice, .error {
  border-radius: 10px; padding: 0.9rem 1.1rem; margin: 0 0 1.25rem; font-weight: 600;
  border-left: 6px solid var(--accent); background: var(--notice);
}
.error { border-left-color: var(--danger); background: var(--error); }

button, .button {
  display: inline-flex; align-items: center; justify-content: center; min-height: 48px; min-width: 48px;
  padding: 0 1.25rem; border-radius: 10px; border: 2px solid var(--accent); background: var(--accent);
  color: var(--accent-fg); font: inherit; font-weight: 700; cursor: pointer; text-decoration: none;
}
button.secondary { background: transparent; color: var(--accent); }
button.danger { background: var(--danger); border-color: var(--danger); color: var(--danger-fg); }
button[disabled] { opacity: 0.45; cursor: not-allowed; }
/* A row of buttons or links (p.actions, div.actions); never on a table cell, which must stay a cell. */
p.actions, div.actions { display: flex; flex-wrap: wrap; gap: 0.75rem; margin: 0.75rem 0; }
.actions form { margin: 0; }
td.row-actions { white-space: nowrap; }
td.row-actions form { margin: 0; }

label { display: block; font-weight: 700; margin: 0 0 0.35rem; }
input[type="text"], input[type="password"], input[type="search"], input[type="number"], select {
  width: 100%; max-width: 32rem; min-height: 48px; padding: 0.5rem 0.75rem; font: inherit;
  color: var(--fg); background: var(--panel); border: 2px solid var(--line); border-radius: 8px;
}
.field { margin: 0 0 1rem; }
fieldset { border: 2px solid var(--line); border-radius: 10px; padding: 1rem 1.25rem; margin: 0 0 1.25rem; }
legend { font-weight: 700; padding: 0 0.4rem; }

.table-wrap { overflow-x: auto; }
table { border-collapse: collapse; width: 100%; background: var(--panel); border-radius: 10px; }
caption { text-align: left; font-weight: 700; font-size: 1.15rem; padding: 0 0 0.5rem; }
th, td { text-align: left; padding: 0.65rem 0.75rem; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { border-bottom: 2px solid var(--line); white-space: nowrap; }
tbody th, tbody td { vertical-align: middle; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }

.state { display: inline-block; padding: 0.1rem 0.6rem; border-radius: 999px; border: 2px solid currentColor; font-weight: 700; }
.state-live { color: var(--ok); }
.state-rehearsal { color: var(--warn); }
.state-ended, .state-draft, .state-scheduled { color: var(--muted); }

.rules { display: grid; grid-template-columns: max-content 1fr; gap: 0.4rem 1.25rem; margin: 0 0 1rem; }
.rules dt { font-weight: 700; }
.rules dd { margin: 0; }

.clicker {
  background: var(--panel); border: 2px solid var(--line); border-radius: 14px; padding: 1.25rem;
  margin: 1rem 0 1.5rem; text-align: center;
}
.clicker .slide { font-size: 3rem; font-weight: 800; margin: 0.25rem auto; font-variant-numeric: tabular-nums; }
.clicker .keys { font-size: 1.5rem; font-weight: 600; margin: 0.25rem auto 1rem; font-variant-numeric: tabular-nums; }
.clicker form { margin: 0; }
.clicker button.next { width: 100%; max-width: 28rem; min-height: 96px; font-size: 1.75rem; border-radius: 14px; }
.clicker .why { margin: 1rem auto 0; color: var(--muted); }

.sign-in { max-width: 30rem; margin: 3rem auto; background: var(--panel); border: 2px solid var(--line); border-radius: 14px; padding: 1.5rem; }

.clicker h2 { margin: 0 0 0.5rem; }
.clicker p { margin-left: auto; margin-right: auto; }
.clicker .state-line { margin-top: 0.25rem; margin-bottom: 0.25rem; }
.clicker .state-buttons { justify-content: center; margin: 0.5rem 0 0.75rem; }

@media (max-width: 40rem) {
  :root { font-size: 106%; }
  main { padding: 0.75rem 0.9rem; }
  h1 { font-size: 1.5rem; margin: 0.25rem 0 0.5rem; }
  h2 { margin: 1.25rem 0 0.5rem; }
  /* One compact header: the event and who on one line, the navigation one row that scrolls sideways. */
  .top { padding: 0.4rem 0.75rem; gap: 0.25rem 0.75rem; }
  .event { font-size: 1rem; flex: 1 1 auto; min-width: 0; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
  .top nav { order: 3; flex: 1 0 100%; min-width: 0; }
  .top nav ul { flex-wrap: nowrap; overflow-x: auto; gap: 0.25rem; }
  .top nav a { min-height: 44px; padding: 0 0.6rem; white-space: nowrap; }
  .who { margin-left: 0; gap: 0.5rem; font-size: 0.9rem; }
  .who button { min-height: 44px; padding: 0 0.8rem; }
  .rules { grid-template-columns: 1fr; }
  .clicker { padding: 0.75rem; margin: 0.5rem 0 1rem; }
  .clicker h2 { margin-bottom: 0.25rem; font-size: 1.1rem; }
  .clicker .slide { font-size: 2.2rem; }
  .clicker .keys { font-size: 1.2rem; margin: 0.25rem auto 0.75rem; }
  .clicker button.next { min-height: 112px; }
  .clicker .state-buttons { gap: 0.5rem; }
  /* The live view: name, online, RTT and last seen; the report and a wider screen have the rest. */
  th.wide, td.wide { display: none; }
  #live-table td { white-space: nowrap; }
  th, td { padding: 0.55rem 0.5rem; }
}
@media (prefers-reduced-motion: no-preference) { button { transition: filter 0.1s; } button:active { filter: brightness(0.9); } }

/* ---- companion devices, staff tokens, devices, live view, report, audit ---- */
.minted { border: 3px solid var(--accent); border-radius: 14px; padding: 1rem 1.25rem; margin: 1rem 0 1.5rem;
  display: flex; flex-wrap: wrap; gap: 0 2rem; align-items: flex-start; }
.minted-text { flex: 1 1 22rem; min-width: 0; }
.minted .qr { flex: 0 1 20rem; }
.minted .secret { font-size: 1.5rem; font-weight: 700; word-break: break-all; user-select: all; }
.qr { margin: 1rem 0; }
.qr svg { display: block; width: 100%; max-width: 20rem; height: auto; }
a.button { display: inline-block; min-height: 48px; padding: 0.6rem 1.1rem; border-radius: 10px; font-weight: 700;
  text-decoration: none; background: var(--accent); color: var(--accent-fg); }
a.button.danger { background: var(--danger); color: var(--danger-fg); }
.report-pair { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 1.25rem; align-items: start; }
.chart { margin: 0; }
.bar-chart { width: 100%; height: auto; color: var(--fg); font-size: 15px; }
.pager { display: flex; gap: 1rem; flex-wrap: wrap; margin: 1rem 0; }
@media (max-width: 40rem) {
  .report-pair { grid-template-columns: 1fr; }
  .minted .secret { font-size: 1.2rem; }
}
"""#
}
