#!/usr/bin/env python3
"""The staff console in a real browser (Scripts/test-console): headless Chromium through Selenium, driven through
a whole event as staff would, then the attacker cases, each role's forbidden actions and axe-core on every page.

Elements are found by their accessible name and role as Chromium computes them (WebDriver's computed label and
role), never by CSS, so a page that loses a label fails here as it would for a screen reader. One line per check
(ok / FAIL); exit 1 if any failed. Screenshots of every page go to .build/console-screenshots/ (light and dark;
the presenter's at phone width too).
"""
import argparse
import csv
import http.server
import io
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import serverlib  # noqa: E402

from axe_selenium_python import Axe  # noqa: E402
from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException, UnexpectedAlertPresentException, WebDriverException  # noqa: E402
from selenium.webdriver.chrome.options import Options  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.action_chains import ActionChains  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.select import Select  # noqa: E402

SHOTS = os.path.join(serverlib.ROOT, ".build", "console-screenshots")
HOSTILE = ["<img src=x onerror=alert(1)>", "</script><script>alert(2)</script>", "\"><svg onload=alert(3)>"]
failures = []
# Chromium names some roles by their ARIA 1.3 synonyms.
KEYNOTE = re.compile("^Shipping Encrypted Slide Decks")  # the keynote's title in Samples/sessions/keynote.json
ROLE_ALIASES = {"image": "img", "graphics-document": "img"}


def check(ok, name, detail=""):
    print(f"  {'ok' if ok else 'FAIL'}: {name}" + (f" ({detail})" if detail and not ok else ""), flush=True)
    if not ok:
        failures.append(name)
    return ok


def free_port(host="127.0.0.1"):
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


# Recorded before any page script runs (DevTools scripts are not subject to the page's CSP): an alert or prompt
# (what an injected script would open) is counted, not shown; the console's own confirm() ("Revoke?") is
# answered yes and kept apart.
DIALOG_TRAP = """
window.__dialogs = [];
window.__confirms = [];
for (const name of ['alert', 'prompt']) {
  window[name] = function (message) { window.__dialogs.push(name + ': ' + message); return null; };
}
window.confirm = function (message) { window.__confirms.push(String(message)); return true; };
"""


class Browser:
    """One browser profile (its own cookies): a person at a laptop, or the presenter at a phone."""

    def __init__(self, base, name, width=1366, height=900):
        self.base, self.name = base, name
        options = Options()
        for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", f"--window-size={width},{height}", "--lang=en-GB"):
            options.add_argument(argument)
        options.binary_location = "/usr/bin/chromium"
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        self.driver = webdriver.Chrome(options=options, service=Service("/usr/bin/chromedriver"))
        self.driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": DIALOG_TRAP})
        if width < 500:  # below a desktop window's least width: a phone's viewport, emulated
            self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": True})
        self.errors = []

    def open(self, path):
        self.driver.get(self.base + path)
        return self

    def narrow(self, on=True):
        """Emulates a 390 × 844 phone viewport (on), or the window again (off)."""
        if on:
            self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844, "deviceScaleFactor": 1, "mobile": True})
        else:
            self.driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        time.sleep(0.2)

    def fits_sideways(self):
        """Whether the page needs no sideways scrolling: nothing wider than the viewport, no table scrolling in its box."""
        return self.driver.execute_script("""
            const wraps = Array.from(document.querySelectorAll('.table-wrap'));
            return document.documentElement.scrollWidth <= window.innerWidth && wraps.every(w => w.scrollWidth <= w.clientWidth + 1);""")

    def wait(self, condition, seconds=10):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                value = condition()
                if value:
                    return value
            except (NoSuchElementException, StaleElementReferenceException):
                pass
            time.sleep(0.05)
        return condition()

    def named(self, role, name, many=False):
        """Elements whose computed ARIA role is `role` and whose accessible name is `name` (or matches it)."""
        found = []
        for element in self.driver.find_elements(By.CSS_SELECTOR, "a, button, input, select, textarea, table, [role], svg, img, h1, h2"):
            try:
                computed = element.aria_role
                if ROLE_ALIASES.get(computed, computed) != role:
                    continue
                label = (element.accessible_name or "").strip()
            except StaleElementReferenceException:
                continue
            except WebDriverException as error:  # the page moved on while its roles were read: the element is gone
                if "does not belong to the document" not in str(error):
                    raise
                continue
            if (name.search(label) if isinstance(name, re.Pattern) else label == name):
                if not many:
                    return element
                found.append(element)
        if many:
            return found
        raise NoSuchElementException(f"no {role} named {name!r} on {self.driver.current_url}")

    def has(self, role, name):
        try:
            self.named(role, name)
            return True
        except NoSuchElementException:
            return False

    def click(self, role, name):
        self.named(role, name).click()

    def fill(self, name, text, role="textbox"):
        field = self.named(role, name)
        field.clear()
        field.send_keys(text)

    def text(self):
        return self.driver.find_element(By.TAG_NAME, "body").text

    def dialogs(self):
        try:
            return self.driver.execute_script("return window.__dialogs || []")
        except UnexpectedAlertPresentException:
            return ["a real dialog was shown"]

    def console_errors(self):
        entries = self.driver.get_log("browser")
        return [entry["message"] for entry in entries if entry["level"] == "SEVERE" and "favicon" not in entry["message"]]

    def scheme(self, scheme):
        """Emulates `prefers-color-scheme: scheme` (None: the browser's own)."""
        features = [{"name": "prefers-color-scheme", "value": scheme}] if scheme else []
        self.driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": features})
        time.sleep(0.1)

    def axe(self, page):
        axe = Axe(self.driver)
        axe.inject()
        result = axe.run()
        bad = [f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
               for v in result["violations"] if v.get("impact") in ("critical", "serious")]
        check(not bad, f"axe-core: no critical or serious violation on {page}", "; ".join(bad))

    def visit(self, page, shot=None):
        """Checks every page is safe and accessible: no dialog, no console error (a CSP refusal is one), and
        axe-core in the light and the dark colour scheme (contrast differs); a screenshot in each."""
        check(not self.dialogs(), f"{page}: no script of a device string ran", str(self.dialogs()))
        errors = self.console_errors()
        check(not errors, f"{page}: no console error (a CSP refusal would be one)", "; ".join(errors)[:400])
        os.makedirs(SHOTS, exist_ok=True)
        for scheme in ("light", "dark"):
            self.scheme(scheme)
            self.axe(f"{page} ({scheme})")
            self.driver.execute_script("window.scrollTo(0, 0)")  # the page as it opens, not where a click scrolled it
            self.driver.save_screenshot(os.path.join(SHOTS, f"{shot or f'{self.name}-{page}'}-{scheme}.png"))
        self.scheme(None)

    def cookie_header(self):
        return "; ".join(f"{c['name']}={c['value']}" for c in self.driver.get_cookies())

    def post_form(self, action, fields):
        """A form post from inside the page (same origin, the page's cookie): the status it got."""
        return self.driver.execute_script("""
            const [action, fields] = arguments;
            const body = new URLSearchParams(fields);
            const answer = await fetch(action, {method: 'POST', body, redirect: 'manual', credentials: 'same-origin'});
            return answer.status || 303;""", action, fields)

    def csrf(self):
        """The CSRF token of this page's forms (a hidden field bound to the session)."""
        for field in self.driver.find_elements(By.CSS_SELECTOR, "form input[type=hidden]"):
            if "csrf" in (field.get_attribute("name") or "").lower():
                return field.get_attribute("name"), field.get_attribute("value")
        return None, None

    def quit(self):
        self.driver.quit()


def whole_on_screen(browser, element):
    """Whether the element is inside the viewport as the page opens (scrolled to the top): a camera sees all of it."""
    return browser.driver.execute_script("""
        window.scrollTo(0, 0);
        const box = arguments[0].getBoundingClientRect();
        return box.top >= 0 && box.left >= 0 && box.bottom <= window.innerHeight && box.right <= window.innerWidth;""", element)


def decode_qr(browser, image):
    """Reads a QR code off the screen as a camera would: a screenshot of the element, through zbarimg.
    A screenshot that reads no code is kept in the screenshots folder for a look."""
    path = os.path.join(SHOTS, f"{browser.name}-qr-{int(time.time() * 1000)}.png")
    os.makedirs(SHOTS, exist_ok=True)
    browser.driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", image)
    with open(path, "wb") as f:
        f.write(image.screenshot_as_png)
    out = subprocess.run(["zbarimg", "--quiet", "--raw", path], capture_output=True, text=True)
    if out.returncode != 0:
        return None
    os.unlink(path)
    return out.stdout.strip()


class Phones:
    """pulse-device phones in a folder of their own: enroll, watch, diag."""

    def __init__(self, server, base):
        self.server, self.base = server, base
        self.folder = os.path.join(server.work, "phones")
        self.watchers = {}

    def tool(self, *arguments, check_=True):
        return subprocess.run([os.path.join(self.server.bin, "pulse-device"), *arguments], capture_output=True, text=True, env=self.server.env, check=check_)

    def enroll(self, name, link):
        folder = os.path.join(self.folder, name.replace(" ", "-").lower())
        out = self.tool("enroll", "--link", link, "--device-dir", folder, "--name", name, "--platform", "ios", check_=False)
        check(out.returncode == 0, f"pulse-device enroll --link from the QR code: {name}", out.stderr.strip())
        return folder

    def watch(self, folder):
        self.watchers[folder] = subprocess.Popen(
            [os.path.join(self.server.bin, "pulse-device"), "watch", "--device-dir", folder, "--session", "keynote", "--json", "--until-ended"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=self.server.env)

    def diag(self, folder, rtt, build="2.4.1"):
        out = self.tool("diag", "--device-dir", folder, "--session", "keynote", "--rtt-ms", str(rtt), "--effective-type", "wifi", "--build", build, check_=False)
        check(out.returncode == 0, f"pulse-device diag from {os.path.basename(folder)}", out.stderr.strip())

    def stop(self):
        for process in self.watchers.values():
            if process.poll() is None:
                process.terminate()
                process.wait(10)


def cross_site_post(action, fields):
    """A page on another loopback origin (127.0.0.2) whose form posts to `action` on load, as an attacker's
    page would; returns its URL and the server to stop."""
    page = "<!doctype html><title>win a prize</title><form method=post action='%s'>%s</form><script>document.forms[0].submit()</script>" % (
        action, "".join(f"<input type=hidden name='{k}' value='{v}'>" for k, v in fields.items()))

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            body = page.encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.2", 0), Handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return f"http://127.0.0.2:{httpd.server_address[1]}/", httpd


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--keep", action="store_true", help="keep the server's work folder")
    parser.add_argument("--bench", type=int, metavar="DEVICES", help="instead: Next slide pressed in the browser to DEVICES watching devices holding the key")
    parser.add_argument("--rounds", type=int, default=5, help="presses measured with --bench (default 5)")
    options = parser.parse_args()
    print("test-console: building the release tools", flush=True)
    bin_path = serverlib.build_release(("pulse-server", "pulse-pack", "pulse-device"))
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    if options.bench:
        return bench(bin_path, port, options.bench, options.rounds)
    shutil.rmtree(SHOTS, ignore_errors=True)
    server = serverlib.OwnServer(bin_path, extra=["--public-url", base], name="pulse-console-test", listen=f"127.0.0.1:{port}", live=False)
    phones = Phones(server, base)
    browsers = []
    try:
        run(server, base, phones, browsers)
    finally:
        phones.stop()
        for browser in browsers:
            browser.quit()
        server.stop()
        if options.keep:
            print(f"test-console: kept {server.work}")
        else:
            server.close()
    print(f"test-console: {len(failures)} failed; screenshots in {SHOTS}" if failures else f"test-console: all passed; screenshots in {SHOTS}")
    return 1 if failures else 0


def sign_in(browser, token):
    browser.open("/console")
    browser.wait(lambda: browser.has("textbox", "Staff token") or browser.has("button", "Sign in"))
    browser.fill("Staff token", token)
    browser.click("button", "Sign in")
    return browser.wait(lambda: browser.has("button", "Sign out") or browser.has("link", "Sign out"))


def open_live(browser):
    """The keynote's live view, as staff find it: Sessions, the keynote, its live view."""
    browser.open("/console")
    browser.click("link", "Sessions")
    browser.click("link", KEYNOTE)
    browser.click("link", re.compile("^Live view of Shipping"))


def open_report(browser):
    browser.open("/console")
    browser.click("link", "Sessions")
    browser.click("link", KEYNOTE)
    browser.click("link", re.compile("^Report of Shipping"))


def run(server, base, phones, browsers):
    print("== an event, as staff run it", flush=True)
    admin = Browser(base, "admin")
    browsers.append(admin)
    admin.open("/console")
    check(admin.wait(lambda: admin.has("textbox", "Staff token")), "the console asks for a staff token first")
    admin.visit("sign-in")
    check(sign_in(admin, server.staff), "an admin signs in with the staff token")
    cookies = admin.driver.get_cookies()
    check(cookies and all(c.get("httpOnly") and c.get("sameSite") == "Strict" for c in cookies), "the session cookie is HttpOnly and SameSite=Strict", str(cookies))
    check(all(server.staff not in c["value"] for c in cookies), "the cookie holds a session id, not the token")

    admin.click("link", "Sessions")
    check(admin.wait(lambda: admin.has("link", KEYNOTE)), "Sessions lists the keynote by its title")
    admin.visit("sessions")

    # A device code, read off the screen by a camera (zbarimg), enrolls a real pulse-device.
    admin.click("link", "Companion app devices")
    admin.wait(lambda: admin.has("button", "New device code"))
    admin.visit("companion-devices")
    admin.click("button", "New device code")
    qr = admin.wait(lambda: admin.named("img", re.compile("QR", re.I)))
    admin.visit("device-code-minted")
    check(bool(qr) and whole_on_screen(admin, qr), "the device code's QR code is whole on a 1366×900 screen as the page opens")
    link = decode_qr(admin, qr) if qr else None
    check(bool(link), "the device code's QR code decodes from a screenshot", str(link))
    stage = phones.enroll("Stage left", link) if link else None
    admin.open("/console")
    admin.click("link", "Companion app devices")
    admin.wait(lambda: admin.has("button", "New attendee link"))
    admin.click("button", "New attendee link")
    qr = admin.wait(lambda: admin.named("img", re.compile("QR", re.I)))
    attendee_link = decode_qr(admin, qr) if qr else None
    check(bool(attendee_link), "the attendee link's QR code decodes from a screenshot", str(attendee_link))
    admin.visit("attendee-link-minted")
    folders = [f for f in [stage] + ([phones.enroll(f"Row {n}", attendee_link) for n in (1, 2)] if attendee_link else []) if f]
    admin.open("/console")
    admin.click("link", "Companion app devices")
    check(admin.wait(lambda: link and link.split("=")[-1][-12:] not in admin.text()), "after minting, the list shows no secret again")

    for folder in folders:
        phones.watch(folder)

    # The admin mints the presenter's token on Staff tokens: shown once, with the presenter link and its QR code.
    admin.open("/console")
    admin.click("link", "Staff tokens")
    admin.wait(lambda: admin.has("button", "New staff token"))
    admin.visit("staff-tokens")
    Select(admin.named("combobox", "Role")).select_by_value("presenter")
    Select(admin.named("combobox", "Session")).select_by_value("keynote")
    admin.click("button", "New staff token")
    qr = admin.wait(lambda: admin.named("img", re.compile("QR code of the presenter link", re.I)))
    presenter_link = decode_qr(admin, qr) if qr else None
    check(bool(presenter_link) and presenter_link.startswith(base + "/console/present#"), "the presenter link's QR code decodes from a screenshot", str(presenter_link))
    check(bool(presenter_link) and presenter_link in admin.text(), "the presenter link is shown as text beside its QR code")
    admin.visit("staff-token-minted")
    presenter_token = presenter_link.split("#", 1)[1] if presenter_link else server.admin("staff-token", "create", "--role", "presenter", "--session", "keynote")
    admin.open("/console/staff-tokens")
    check(admin.wait(lambda: "Presenter" in admin.text() and presenter_token not in admin.text()), "the list shows the presenter's token by id only")

    # The presenter, on a phone, opens the presenter link (the token in the fragment, exchanged once for a cookie).
    presenter = Browser(base, "presenter", width=390, height=844)
    browsers.append(presenter)
    presenter.open(f"/console/present#{presenter_token}")
    check(presenter.wait(lambda: presenter.has("button", "Next slide") or presenter.has("button", "Go live"), 15), "the presenter link signs in without typing")
    check(presenter_token not in presenter.driver.current_url, "the token is gone from the address bar")
    presenter.visit("present", shot="presenter-phone")
    check(bool(presenter.wait(lambda: presenter.has("button", "Go live") and presenter.has("button", "End session"))),
          "the presenter's Go live and End session are on the page")
    state = presenter.named("button", "Go live")
    check(whole_on_screen(presenter, state) and whole_on_screen(presenter, presenter.named("button", "End session")),
          "at phone width, Go live and End session are on the first screen")
    damaged = Browser(base, "presenter-damaged", width=390, height=844)
    browsers.append(damaged)
    damaged.open(f"/console/present#{presenter_token}%")  # a lone % at the end: decodeURIComponent always throws
    check(damaged.wait(lambda: "damaged" in damaged.text(), 5), "a presenter link with a malformed % escape says it is damaged")
    check(presenter_token not in damaged.driver.current_url and "#" not in damaged.driver.current_url,
          "and leaves no token in the address bar", damaged.driver.current_url)
    damaged.driver.back()  # the entry before the link (the new tab's blank page)
    before = damaged.driver.current_url
    damaged.driver.forward()
    check(presenter_token not in before and presenter_token not in damaged.driver.current_url and "#" not in damaged.driver.current_url,
          "nor in the history, back or forward", f"{before} {damaged.driver.current_url}")
    damaged.quit()
    browsers.remove(damaged)
    presenter.click("button", "Go live")
    presenter.wait(lambda: presenter.has("button", "Next slide"))
    # A presenter remote sends PageDown; a keyboard → or Space: each moves the frontier one slide.
    for n, (key, name) in enumerate([(Keys.PAGE_DOWN, "PageDown"), (Keys.ARROW_RIGHT, "→"), (Keys.SPACE, "Space")], start=1):
        ActionChains(presenter.driver).send_keys(key).perform()
        moved = presenter.wait(lambda: re.search(rf"Slide {n} of \d+", presenter.text()), 10)
        check(bool(moved), f"{name} in the clicker moves to Slide {n}", presenter.text()[-300:])
    counted = presenter.wait(lambda: re.search(r"\b3 of 3 devices have this slide.s key", presenter.text()), 20)
    check(bool(counted), "PageDown, → and Space later: 3 of 3 devices have this slide's key", presenter.text()[-300:])
    check(bool(re.search(r"Slide 3 of \d+", presenter.text())), "the clicker says Slide 3 of M")
    presenter.visit("present-live", shot="presenter-phone-live")

    admin.open("/console")
    admin.click("link", "Live view")
    check(admin.wait(lambda: admin.has("link", KEYNOTE)), "the live view's index lists the keynote")
    admin.visit("live-index")
    admin.open("/console/enroll")
    check(admin.wait(lambda: "Join with the Pulse app" in admin.text()), "the enrollment link's page says to open it in the app")
    admin.visit("enroll")

    # The live view shows each phone's diag sample within a second, without a reload.
    open_live(admin)
    table = admin.wait(lambda: admin.named("table", "Devices in the room"))
    check(bool(table), "the live view has a table captioned Devices in the room")
    for n, folder in enumerate(folders):
        sent = time.monotonic()
        phones.diag(folder, 40 + n)
        seen = admin.wait(lambda: f"{40 + n} ms" in admin.text() or f"{40 + n}ms" in admin.text(), 5)
        # From pulse-device's diag sent (the process started) to the row on the screen.
        elapsed = time.monotonic() - sent
        check(bool(seen) and elapsed <= 1.0, f"a diag sample shows in the live view within a second ({elapsed:.2f} s)")
    admin.visit("live-view")
    admin.narrow()
    check(admin.fits_sideways(), "at phone width the live view needs no sideways scrolling")
    admin.visit("live-view-phone")
    admin.narrow(False)

    presenter.click("button", "End session")
    ended = all(process.wait(20) == 0 for process in phones.watchers.values())
    check(ended, "every watching phone saw the session end")
    unlocked = [sum(1 for line in process.stdout.read().splitlines() if '"type":"unlocked"' in line.replace(" ", "")) for process in phones.watchers.values()]
    check(all(count >= 3 for count in unlocked), "every phone unlocked three slides", str(unlocked))

    # The report: SVG charts with the same numbers in tables, and the CSV.
    open_report(admin)
    charts = admin.wait(lambda: admin.named("img", re.compile("."), many=True))
    check(len(charts) >= 3, "the report draws its charts as images with names", str(len(charts)))
    admin.visit("report")
    download = admin.named("link", "Download CSV")
    request = urllib.request.Request(download.get_attribute("href"), headers={"Cookie": admin.cookie_header()})
    with urllib.request.urlopen(request, timeout=10) as answer:
        rows = list(csv.reader(io.StringIO(answer.read().decode())))
    check(len(rows) >= 2, "Download CSV gives the report as CSV", str(rows[:2]))

    admin.open("/console")
    admin.click("link", "Sessions")
    admin.click("link", KEYNOTE)
    check(admin.wait(lambda: admin.has("button", "Go live") and admin.has("button", "End session")), "an admin's session page has the state buttons")
    admin.visit("session")
    admin.click("link", "Audit")
    check(admin.wait(lambda: "device-code" in admin.text() or "advance" in admin.text()), "the audit page lists the staff actions")
    admin.visit("audit")

    attacker(server, base, phones, admin, browsers)
    roles(server, base, browsers)
    revoke_with_devices(server, admin)
    too_fast(server, base, browsers)
    logged = serverlib.read_text(server.access_log) + serverlib.read_text(server.errors)
    secrets = {"staff token": server.staff, "presenter token": presenter_token, "device code": link, "attendee link": attendee_link}
    for what, secret in secrets.items():
        if secret:
            secret = secret.rsplit("=", 1)[-1].rsplit("#", 1)[-1]
            check(secret not in logged, f"the {what} is in no access log or server log line")


def attacker(server, base, phones, admin, browsers):
    print("== an attacker's device strings, a cross-site form", flush=True)
    target = serverlib.Target("127.0.0.1", int(base.rsplit(":", 1)[1]))
    server.admin("session", "set", "keynote", "--state", "live")
    # A platform is 1-32 of a-z 0-9 . _ - or the enrollment is refused (400, field platform): names and
    # builds are where an attacker's markup can go.
    status, _ = target.json("POST", "/api/sync/enroll", value={"token": server.registration, "publicKey": serverlib.spki_b64(serverlib.new_key()), "platform": HOSTILE[0], "name": "x"})
    check(status in (400, 429), "a platform with markup is refused at enrollment", str(status))
    for name in HOSTILE:
        key = serverlib.new_key()
        for _ in range(30):  # the enrollment rate limit of one address: wait as a phone would
            status, answer = target.json("POST", "/api/sync/enroll", value={"token": server.registration, "publicKey": serverlib.spki_b64(key), "platform": "ios", "name": name})
            if status != 429:
                break
            time.sleep(1)
        if check(status == 200, f"a device named {name!r} enrolls", f"{status} {answer}"):
            device = serverlib.Device(answer["deviceId"], key)
            body = json.dumps({"platform": "ios", "rttMs": 12, "online": True, "effectiveType": "wifi", "build": name[:40]}).encode()
            path = "/api/sessions/keynote/diag"
            status, _, answer, _ = target.request("POST", path, [("X-Pulse-Device", device.header("POST", path, body)), ("Content-Type", "application/json")], body)
            check(status in (200, 202, 204), f"its diag sample with that build is stored", f"{status} {answer[:200]}")
    for page, open_page in [
        ("live view (hostile)", lambda: open_live(admin)),
        ("devices (hostile)", lambda: (admin.open("/console"), admin.click("link", "Devices"))),
        ("report (hostile)", lambda: open_report(admin)),
    ]:
        open_page()
        shown = admin.wait(lambda: all(name in admin.text() for name in HOSTILE[:2]), 5)
        check(bool(shown), f"{page}: the names show as the text they are")
        admin.visit(page.replace(" ", "-").replace("(", "").replace(")", ""))

    # A cross-site form post with the admin's cookie in the browser changes nothing.
    admin.open("/console")
    admin.click("link", "Devices")
    check(len({link.accessible_name for link in admin.named("link", re.compile(r"^Revoke"), many=True)}) > 1,
          "each Revoke link has a name of its own (the device's)")
    revoke = admin.named("link", re.compile(r"^Revoke "), many=True)
    before = server.admin("device", "list", "--json")
    actions = []
    if check(bool(revoke), "the devices page offers Revoke"):
        revoke[0].click()
        admin.wait(lambda: admin.has("button", "Revoke device"))
        admin.visit("revoke-confirm")
        forms = admin.driver.find_elements(By.CSS_SELECTOR, "form[method=post], form[method=POST]")
        actions = [f.get_attribute("action") for f in forms if "revoke" in (f.get_attribute("action") or "")]
    if check(bool(actions), "Revoke asks for a confirmation, a form of its own"):
        name, value = admin.csrf()
        url, httpd = cross_site_post(actions[0], {name or "csrf": value or "guess", "confirm": "yes"})
        try:
            admin.driver.get(url)
            time.sleep(1.5)
        finally:
            httpd.shutdown()
        check(server.admin("device", "list", "--json") == before, "a cross-site form post (even with the page's CSRF token) revokes nothing")
        path = urllib.parse.urlsplit(actions[0]).path
        answered = [line for line in serverlib.read_text(server.access_log).splitlines() if f" POST {path} " in line]
        check(any(f" POST {path} 403 " in line for line in answered),
              "the cross-site post reached the server and was answered 403 (access log)", "; ".join(answered[-3:]))
        admin.open("/console")
        status = admin.post_form(actions[0], {"confirm": "yes"})
        check(status == 403, "a same-origin post without the CSRF token is refused with 403", str(status))
        admin.console_errors()  # Chromium logs that expected 403 as a failed load: not an error of a page
        check(server.admin("device", "list", "--json") == before, "and changes nothing")


def roles(server, base, browsers):
    """Each role below admin posts every action the console has that its role may not do, to the route the
    console's own forms post to, with a valid CSRF token of its own session: each is exactly 403 and changes
    nothing (tokens, devices, sessions)."""
    print("== each role's forbidden actions", flush=True)
    moderator_token = server.admin("staff-token", "create", "--role", "moderator")
    moderator = Browser(base, "moderator")
    browsers.append(moderator)
    check(sign_in(moderator, moderator_token), "a moderator signs in")
    moderator.visit("moderator-home")
    moderator.open("/console")
    check(not moderator.has("link", "Companion app devices"), "a moderator's navigation has no Companion app devices")
    check(not moderator.has("link", "Staff tokens"), "a moderator's navigation has no Staff tokens")
    moderator.open("/console/companion")
    check(not moderator.has("button", "New device code") and not moderator.has("button", "New attendee link"),
          "a moderator is offered no minting of codes or links")
    moderator.open("/console/staff-tokens")
    check(not moderator.has("button", "New staff token"), "a moderator is offered no minting of staff tokens")
    presenter_token = server.admin("staff-token", "create", "--role", "presenter", "--session", "keynote")
    presenter = Browser(base, "presenter-2", width=390, height=844)
    browsers.append(presenter)
    check(sign_in(presenter, presenter_token), "a presenter signs in with a typed token too")

    devices = json.loads(server.admin("device", "list", "--json"))
    credentials = json.loads(server.admin("token", "list", "--json"))
    device = next(d["id"] for d in devices if not d.get("revokedAt"))
    code = next(c["id"] for c in credentials if c.get("kind") != "staff-token" and not c.get("revokedAt"))
    staff = next(c["id"] for c in credentials if c.get("kind") == "staff-token" and not c.get("revokedAt"))
    other = next(s["id"] for s in json.loads(server.admin("session", "list", "--json")) if s["id"] != "keynote")
    # What no one below admin may do, as the console's forms post it (Sources/PulseConsole).
    forbidden = [
        ("/console/companion", {"do": "code", "scope": "session:keynote", "expires": "3600"}),
        ("/console/companion", {"do": "link", "series": "devconf-2026", "expires": "3600"}),
        ("/console/companion", {"do": "revoke", "id": code}),
        ("/console/companion", {"do": "revoke-devices", "id": code, "confirmed": "yes"}),
        ("/console/staff-tokens", {"do": "mint", "role": "admin", "expires": "3600"}),
        ("/console/staff-tokens", {"do": "mint", "role": "presenter", "session": "keynote", "expires": "3600"}),
        ("/console/staff-tokens", {"do": "revoke", "id": staff}),
        (f"/console/devices/{device}/revoke", {}),
        ("/console/sessions/keynote", {"action": "rules", "allowDownload": "on", "venueNetworks": "10.0.0.0/8"}),
        ("/console/sessions/keynote", {"action": "state", "state": "scheduled"}),
        (f"/console/sessions/{other}/advance", {"slide": "1"}),
        (f"/console/sessions/{other}", {"action": "state", "state": "live"}),
    ]
    moderator_only = [
        ("/console/sessions/keynote/advance", {"slide": "4"}),
        ("/console/sessions/keynote", {"action": "state", "state": "live"}),
    ]
    def state():
        tokens = [{k: v for k, v in t.items() if k != "enrolledLastMinute"} for t in json.loads(server.admin("token", "list", "--json"))]
        return [tokens, json.loads(server.admin("device", "list", "--json")), json.loads(server.admin("session", "list", "--json"))]

    before = state()
    for browser, role, actions in [(moderator, "moderator", forbidden + moderator_only), (presenter, "presenter", forbidden)]:
        browser.open("/console")
        name, value = browser.csrf()
        check(name == "csrf" and bool(value), f"the {role}'s page has its session's CSRF token")
        for action, fields in actions:
            status = browser.post_form(action, dict(fields, csrf=value or ""))
            what = fields.get("do") or fields.get("action") or ("advance" if action.endswith("/advance") else "revoke")
            check(status == 403, f"a {role} posting {what} to {action} gets 403", str(status))
    after = state()
    check(after[0] == before[0], "no role below admin minted or revoked a code, link or token")
    check(after[1] == before[1], "no role below admin revoked a device")
    check(after[2] == before[2], "no role below admin changed a session's state, rules or frontier")
    presenter.open("/console/devices")
    check("Ada" not in presenter.text() and not presenter.has("table", re.compile("evice")), "a presenter sees no device list")


def revoke_with_devices(server, admin):
    """The attendee link minted on the page has leaked: "Revoke <id> with its devices" asks first (the script's
    confirm, answered yes by the trap) and cuts the link and the phones it enrolled (Row 1, Row 2) through the
    staff API's withDevices; every other device stays."""
    print("== a leaked attendee link, revoked with its devices", flush=True)
    rows = [d for d in json.loads(server.admin("device", "list", "--json")) if d["name"].startswith("Row ")]
    links = {d["credential"] for d in rows}
    if not check(len(rows) == 2 and len(links) == 1, "the attendee link's two phones are listed with their link", str(rows)):
        return
    link_id = links.pop()
    admin.open("/console")
    admin.click("link", "Companion app devices")
    button = admin.wait(lambda: admin.named("button", f"Revoke {link_id} with its devices"))
    form = button.find_element(By.XPATH, "./ancestor::form") if button else None
    question = form.get_attribute("data-confirm") if form else ""
    check(bool(question) and "every device it enrolled (2)" in question, "the attendee link has its own \"Revoke <id> with its devices\", which asks first", str(question))
    if not button:
        return
    button.click()
    check(bool(admin.wait(lambda: f"Revoked {link_id} and the 2 devices it enrolled." in admin.text())),
          "confirmed once in the browser, the link and its phones are revoked", admin.text()[-300:])
    after = json.loads(server.admin("device", "list", "--json"))
    check(all(d["status"] == "revoked" for d in after if d["credential"] == link_id), "every phone the link enrolled is revoked")
    check(all(d["status"] == "active" for d in after if d["credential"] != link_id), "every other device stays", str([d["name"] for d in after if d["status"] != "active"]))
    admin.visit("companion-revoked-with-devices")


def too_fast(server, base, browsers):
    """A presenter remote repeating PageDown (80 presses, about 30 a second), on the server restarted to take 1
    change a second in bursts of 5: the page says it is going too fast, keeps the presses (far fewer posts than
    presses, none once it caught up: no retry loop), ends on the last slide, and stays usable (End session
    works). Then eight more
    streams on the presenter's cookie push the page's own stream out, and the page says so."""
    print("== a presenter pressing faster than the server takes changes; too many console streams", flush=True)
    server.stop()
    server.extra += ["--staff-change-rate", "1", "--staff-change-burst", "5"]
    server.start()
    server.admin("session", "set", "keynote", "--state", "live")
    token = server.admin("staff-token", "create", "--role", "presenter", "--session", "keynote")
    presenter = Browser(base, "presenter-fast", width=390, height=844)
    browsers.append(presenter)
    presenter.open(f"/console/present#{token}")
    check(bool(presenter.wait(lambda: presenter.has("button", "Next slide"), 15)), "a presenter signs in on the restarted server")
    shown = re.search(r"Slide (\d+) of (\d+)", presenter.text())
    slides = int(shown.group(2)) if shown else 0

    def advances():
        return [line for line in serverlib.read_text(server.access_log).splitlines() if " POST /console/sessions/keynote/advance " in line]
    before = len(advances())
    presenter.console_errors()  # what came before
    # Every line the page says while the keys go (it may have caught up by the time they are all pressed).
    presenter.driver.execute_script("""
        window.__said = [];
        const line = document.getElementById('live-status');
        new MutationObserver(() => window.__said.push(line.textContent)).observe(line, {childList: true, characterData: true, subtree: true});""")
    chain = ActionChains(presenter.driver)
    for _ in range(80):  # a remote's key repeat: about 30 a second
        chain.send_keys(Keys.PAGE_DOWN).pause(0.03)
    chain.perform()

    def said():
        return presenter.driver.execute_script("return window.__said || []")
    check(bool(presenter.wait(lambda: any("Going too fast" in line for line in said()), 10)), "80 fast PageDowns: the page says it is going too fast", str(said()[-5:]))
    # Chromium logs each 429 answer as a failed resource load: those are expected, anything else is an error.
    time.sleep(0.5)  # the posts in flight are answered
    errors = [e for e in presenter.console_errors() if "status of 429" not in e]
    presenter.visit("present-too-fast", shot="presenter-phone-too-fast")
    check(bool(presenter.wait(lambda: "Caught up: every press was sent." in presenter.text(), 30)), "then it catches up", presenter.text()[-300:])
    check(bool(presenter.wait(lambda: f"Slide {slides} of {slides}" in presenter.text(), 10)), "no press was lost: the clicker is on the last slide", presenter.text()[-300:])
    sent = advances()[before:]
    time.sleep(3)
    check(len(advances()) - before == len(sent), "once caught up nothing more is sent (no retry loop)")
    check(any(" 429 " in line for line in sent) and len(sent) < 40, f"the server said 429 and the page sent far fewer posts than presses ({len(sent)} for 80)")
    errors += [e for e in presenter.console_errors() if "status of 429" not in e]
    check(not errors, "no script error while too fast (only the 429s' own lines)", "; ".join(errors)[:400])
    time.sleep(1.5)  # a change comes back to the bucket
    presenter.click("button", "End session")
    check(bool(presenter.wait(lambda: "The session is now ended." in presenter.text(), 10)), "the page stays usable: End session works", presenter.text()[-300:])

    # Eight more event streams on the presenter's console session (its cap): the page's own, the oldest, goes.
    cookie = presenter.cookie_header()
    held, statuses = [], []
    for _ in range(8):
        connection = socket.create_connection(("127.0.0.1", server.port), timeout=5)
        connection.sendall(f"GET /console/sessions/keynote/events HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nCookie: {cookie}\r\n"
                           "Accept: text/event-stream\r\n\r\n".encode())
        statuses.append(connection.recv(4096).split(b" ", 2)[1:2])
        held.append(connection)
    check(all(status == [b"200"] for status in statuses), "eight more streams open on the presenter's cookie", str(statuses))
    check(bool(presenter.wait(lambda: "Live updates stopped on this page" in presenter.text(), 10)),
          "the page's own stream is pushed out, and the page says so", presenter.text()[-300:])
    for connection in held:
        connection.close()
    presenter.driver.refresh()
    check(bool(presenter.wait(lambda: presenter.has("button", "Go live"), 10)) and "Live updates stopped" not in presenter.text(),
          "reloaded, the page follows again")
    check(not presenter.dialogs(), "no dialog on the presenter's page", str(presenter.dialogs()))


def bench(bin_path, port, devices, rounds):
    """From "Next slide" pressed in the browser (PageDown, as a presenter remote sends it) to every one of
    `devices` watching devices holding the slide's key: each device holds an event stream and fetches its keys
    the moment the advance arrives (Scripts/bench/server-load.c in sse mode, its trigger this browser)."""
    base = f"http://127.0.0.1:{port}"
    limits = ["--enroll-rate", "1000000", "--enroll-burst", "1000000", "--token-enroll-rate", "1000000", "--token-enroll-burst", "1000000"]
    server = serverlib.OwnServer(bin_path, extra=["--public-url", base, *limits], name="pulse-console-bench", listen=f"127.0.0.1:{port}", live=False)
    tools = os.path.join(serverlib.ROOT, ".build", "tools")
    load = os.path.join(tools, "bench-server-load")
    subprocess.run(["cc", "-O2", "-Wall", "-o", load, os.path.join(serverlib.ROOT, "Scripts", "bench", "server-load.c")], check=True)
    presenter = None
    try:
        subprocess.run([sys.executable, os.path.join(serverlib.ROOT, "Scripts", "bench", "server-devices"), "--port", str(port), "--token", server.registration,
                        "--count", str(devices), "--session", "keynote", "--out", server.work], check=True, stdout=subprocess.DEVNULL)
        presenter = Browser(base, "presenter")
        presenter.open(f"/console/present#{server.admin('staff-token', 'create', '--role', 'presenter', '--session', 'keynote')}")
        presenter.wait(lambda: presenter.has("button", "Go live"), 15)
        presenter.click("button", "Go live")
        presenter.wait(lambda: presenter.has("button", "Next slide"))
        p99s = []
        print(f"console bench: {devices} devices, {os.cpu_count()} cores, load before: {' '.join(open('/proc/loadavg').read().split()[:3])}", flush=True)
        for round_ in range(1, rounds + 1):
            generator = subprocess.Popen([load, "sse", str(port), os.path.join(server.work, "events.req"), "-", os.path.join(server.work, "keys.req")],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            while "open_seconds=" not in (generator.stdout.readline() or "open_seconds="):
                pass
            pressed = time.monotonic()
            generator.stdin.write(f"{pressed:.6f}\n")
            generator.stdin.flush()
            ActionChains(presenter.driver).send_keys(Keys.PAGE_DOWN).perform()
            values = dict(line.strip().split("=", 1) for line in generator.communicate(timeout=120)[0].splitlines() if "=" in line)
            p99s.append(float(values.get("fetch_p99_ms", "nan")))
            print(f"  round {round_}: {values.get('fetched')} of {devices} devices hold slide {round_}'s key; advance p50 {values.get('advance_p50_ms')} ms, "
                  f"key in hand p50 {values.get('fetch_p50_ms')} ms, p99 {values.get('fetch_p99_ms')} ms, max {values.get('fetch_max_ms')} ms; errors {values.get('errors')}", flush=True)
            check(values.get("fetched") == str(devices) and all(values.get(f"errors_{kind}") == "0" for kind in ("connect", "read", "write", "timeout", "status")), f"round {round_}: every device got the key", str(values))
            time.sleep(16)  # the server notices the vanished streams at their next heartbeat
        p99s.sort()
        print(f"console bench: Next slide in the browser to the key in hand on {devices} devices, p99 over {rounds} rounds: median {p99s[len(p99s) // 2]:.1f} ms, worst {p99s[-1]:.1f} ms (target < 250 ms)")
    finally:
        if presenter:
            presenter.quit()
        server.close()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
