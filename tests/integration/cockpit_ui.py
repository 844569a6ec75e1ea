"""Drives ringsmb's Cockpit page in headless Chromium (Selenium) against a
cockpit-ws and a ringsmbd that test_cockpit.sh started: adds a user and a
share through the forms, then smbclient uses them; edits and deletes them;
disables and enables the user; closes a session, an open file and a
disconnected durable open from the status tab, which lists byte-range
locks; and checks that bad input, or a button for what is already gone,
shows the same error text as ringsmbctl on the command line.

Prints PASS:/FAIL: lines (test_cockpit.sh counts them); exits 1 on a failure.

Environment: COCKPIT_URL (the module's index.html), CTL (ringsmbctl with the
test's --config), UNPRIVILEGED_AS (set: only check that an ordinary
user's page is refused what ringsmbctl refuses that user), SMB_PORT, SHARE_DIR (an existing directory for the new
share), MISSING_DIR (a path that does not exist), UNIX_USER (the account
the new SMB user maps to), WORK (a scratch directory).
"""
import json
import os
import struct
import subprocess
import sys
import time

from selenium import webdriver
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By

ENV = os.environ
CTL = ENV["CTL"]
failures = 0


def report(ok, what, detail=""):
    global failures
    print(("PASS: " if ok else "FAIL: ") + what + ("" if ok or not detail else f"\n    {detail}"), flush=True)
    if not ok:
        failures += 1


def wait_for(condition, timeout=10.0):
    """The condition's first true value, or None after TIMEOUT seconds."""
    end = time.monotonic() + timeout
    while True:
        try:
            value = condition()
            if value:
                return value
        except WebDriverException:
            pass
        if time.monotonic() > end:
            return None
        time.sleep(0.1)


def cli(*args, stdin=""):
    # As the user the page's bridge runs as (UNPRIVILEGED_AS), else as this process.
    as_user = ["runuser", "-u", ENV["UNPRIVILEGED_AS"], "--"] if ENV.get("UNPRIVILEGED_AS") else []
    return subprocess.run([*as_user, CTL, *args], input=stdin, capture_output=True, text=True, timeout=30)


def cli_json(*args):
    return json.loads(cli(*args, "--json").stdout)


def smbclient(cred, share, commands):
    return subprocess.run(["smbclient", f"//127.0.0.1/{share}", "-p", ENV["SMB_PORT"], "-U", cred, "-c", commands],
                          capture_output=True, text=True, timeout=60)


def start_browser():
    options = Options()
    options.binary_location = "/usr/lib/chromium/chromium"
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--user-data-dir={ENV['WORK']}/chromium-profile", "--window-size=1280,2000"):
        options.add_argument(arg)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


class Page:
    def __init__(self, driver):
        self.d = driver

    def tab(self, name):
        self.d.find_element(By.CSS_SELECTOR, f"#tabs button[data-tab={name}]").click()

    def fill(self, form_id, values, submit=True):
        form = self.d.find_element(By.ID, form_id)
        for name, value in values.items():
            field = form.find_element(By.NAME, name)
            if field.get_attribute("type") == "checkbox":
                if field.is_selected() != bool(value):
                    field.click()
            elif field.tag_name == "select":
                field.find_element(By.CSS_SELECTOR, f"option[value='{value}']").click()
            else:
                field.clear()
                field.send_keys(value)
        if submit:
            form.find_element(By.CSS_SELECTOR, "button[type=submit]").click()

    def text(self, element_id):
        element = self.d.find_element(By.ID, element_id)
        return element.get_attribute("textContent") if element.is_displayed() else ""

    def row(self, table_id, attribute, value):
        for row in self.d.find_elements(By.CSS_SELECTOR, f"#{table_id} tbody tr"):
            if row.get_attribute(attribute) == value:
                return row
        return None

    def click_row_button(self, table_id, attribute, value, label):
        """Clicks LABEL in the row; tables are re-rendered when they load,
        so a button found a moment ago may be gone: find it again."""
        def click():
            row = self.row(table_id, attribute, value)
            buttons = [b for b in row.find_elements(By.TAG_NAME, "button") if b.text == label] if row else []
            if buttons:
                buttons[0].click()
            return bool(buttons)
        # 30 s: in a sanitizer build on a busy machine, a table's reload
        # (ringsmbctl ... --json) can replace the row for longer than 10 s.
        if not wait_for(click, timeout=30.0):
            raise AssertionError(f"no {label} button in {table_id} row {value}")

    def confirm_click(self, table_id, attribute, value, label):
        """Buttons that ask once more: click, then click 'Really ...?'."""
        self.click_row_button(table_id, attribute, value, label)
        self.click_row_button(table_id, attribute, value, f"Really {label.lower()}?")


def same_error_as_cli(page, area, what, cli_args, form_id, values, stdin=""):
    expected = cli(*cli_args, stdin=stdin)
    wanted = expected.stderr.rstrip()
    page.fill(form_id, values)
    shown = wait_for(lambda: page.text(f"{area}-error") == wanted and wanted)
    report(expected.returncode != 0 and bool(shown), f"{what}: the page shows ringsmbctl's error",
           f"CLI exit {expected.returncode} {wanted!r}, page {page.text(area + '-error')!r}")


def users_tab(page):
    page.tab("users")
    page.fill("user-add", {"name": "carol", "unix_user": ENV["UNIX_USER"], "password": "secret-C3"})
    report(wait_for(lambda: page.row("users-table", "data-name", "carol")), "user added through the page is listed")
    report("added user 'carol'" in page.text("users-message"), "the page shows ringsmbctl's answer",
           page.text("users-message"))
    users = cli_json("user", "list")["users"]
    report(any(u.get("name") == "carol" and u.get("unix_user") == ENV["UNIX_USER"] and not u.get("disabled")
               for u in users), "ringsmbctl user list has the new user", users)
    same_error_as_cli(page, "users", "a bad user name",
                      ["user", "add", "bad/name", "--password-stdin", "--unix-user", ENV["UNIX_USER"]],
                      "user-add", {"name": "bad/name", "unix_user": ENV["UNIX_USER"], "password": "x"}, "x\n")
    same_error_as_cli(page, "users", "an unknown unix user",
                      ["user", "add", "dave", "--password-stdin", "--unix-user", "no_such_unix_account"],
                      "user-add", {"name": "dave", "unix_user": "no_such_unix_account", "password": "x"}, "x\n")


def shares_tab(page):
    page.tab("shares")
    page.fill("share-add", {"name": "docs", "path": ENV["SHARE_DIR"], "comment": "Team docs"})
    report(wait_for(lambda: page.row("shares-table", "data-name", "docs")), "share added through the page is listed")
    shares = {s["name"]: s for s in cli_json("share", "list")["shares"]}
    ok = "docs" in shares and shares["docs"]["path"] == ENV["SHARE_DIR"] and not shares["docs"]["read_only"]
    report(ok and shares["docs"]["comment"] == "Team docs", "ringsmbctl share list has the new, writable share")
    same_error_as_cli(page, "shares", "a share path that does not exist",
                      ["share", "add", "bad", "--path", ENV["MISSING_DIR"]],
                      "share-add", {"name": "bad", "path": ENV["MISSING_DIR"], "comment": ""})
    same_error_as_cli(page, "shares", "a share name that exists",
                      ["share", "add", "docs", "--path", ENV["SHARE_DIR"]],
                      "share-add", {"name": "docs", "path": ENV["SHARE_DIR"]})


def smb_uses_them():
    with open(os.path.join(ENV["WORK"], "upload.txt"), "w") as f:
        f.write("written through a share made in Cockpit\n")
    r = smbclient("carol%secret-C3", "docs", f"put {ENV['WORK']}/upload.txt upload.txt")
    report(r.returncode == 0, "smbclient writes to the new share as the new user", r.stdout + r.stderr)
    path = os.path.join(ENV["SHARE_DIR"], "upload.txt")
    report(os.path.exists(path) and open(path).read().startswith("written through"), "the file arrived")


def enable_disable(page):
    """Disable and Enable act on logins (smbclient sees it); a button for a
    user deleted meanwhile shows ringsmbctl's error."""
    page.tab("users")
    wait_for(lambda: page.row("users-table", "data-name", "carol"))
    page.click_row_button("users-table", "data-name", "carol", "Disable")
    shown = wait_for(lambda: (r := page.row("users-table", "data-name", "carol")) and
                     r.get_attribute("data-disabled") == "yes")
    carol = next((u for u in cli_json("user", "list")["users"] if u["name"] == "carol"), {})
    report(shown and carol.get("disabled") is True and "disabled user 'carol'" in page.text("users-message"),
           "Disable marks the user disabled (page and ringsmbctl user list)", carol)
    r = smbclient("carol%secret-C3", "docs", "ls")
    report("NT_STATUS_ACCOUNT_DISABLED" in r.stdout + r.stderr, "the disabled user's login is refused", r.stdout + r.stderr)
    page.click_row_button("users-table", "data-name", "carol", "Enable")
    report(wait_for(lambda: (r := page.row("users-table", "data-name", "carol")) and
                    r.get_attribute("data-disabled") == "no"), "Enable marks the user enabled again")
    r = smbclient("carol%secret-C3", "docs", "ls")
    report(r.returncode == 0, "the enabled user logs in again", r.stdout + r.stderr)
    # A user deleted by someone else while the page showed it.
    cli("user", "add", "dave", "--password-stdin", "--unix-user", ENV["UNIX_USER"], stdin="secret-D1\n")
    page.tab("users")
    wait_for(lambda: page.row("users-table", "data-name", "dave"))
    cli("user", "del", "dave")
    wanted = cli("user", "disable", "dave").stderr.rstrip()
    page.click_row_button("users-table", "data-name", "dave", "Disable")
    report(wanted and wait_for(lambda: page.text("users-error") == wanted),
           "Disable of a user deleted meanwhile shows ringsmbctl's error", f"{wanted!r} {page.text('users-error')!r}")


def raw_smb():
    """The raw SMB2 client of the integration tests (rawsmb reads its port
    and share from the command line when imported)."""
    sys.argv[1:] = [ENV["SMB_PORT"], "docs"]
    import rawsmb
    import smb2user
    return rawsmb, smb2user


READ_WRITE = 0x1 | 0x2 | 0x80 | 0x100 | 0x10000
FILE_CLOSED, OBJECT_NAME_NOT_FOUND = 0xC0000128, 0xC0000034


def durable_open(rawsmb, conn, path, key):
    """PATH opened with an RWH lease and a durable handle (DHnQ), so that it
    is kept when the connection ends; its FileId and its id as status shows it."""
    contexts = rawsmb.create_contexts([(b"RqLs", key + struct.pack("<IIQ", 7, 0, 0)), (b"DHnQ", b"\0" * 16)])
    st, o = conn.create_ex(path, READ_WRITE, disposition=5, oplock=0xFF, contexts=contexts)
    if st != 0:
        raise AssertionError(f"CREATE {path}: 0x{st:08x}")
    return o.fid, "0x%016x" % struct.unpack_from("<Q", o.fid, 0)[0]


def file_row_text(page, file_id):
    row = page.row("files-table", "data-file-id", file_id)
    return row.text if row else ""


def open_in_cli(file_id):
    return next((f for f in cli_json("status")["open_files"] if f["file_id"] == file_id), None)


def files_and_locks(page):
    rawsmb, smb2user = raw_smb()
    c = smb2user.logged_in("carol", "secret-C3", "docs")
    fid, file_id = durable_open(rawsmb, c, "held.bin", os.urandom(16))
    c.write_fid(fid, b"h" * 64)
    locked = c.lock_fid(fid, 0, 10, 0x2 | 0x10) == 0  # exclusive, fail immediately
    page.tab("status")
    report(locked and wait_for(lambda: "open (durable)" in file_row_text(page, file_id)),
           "the status tab lists the open file by its FILE ID, durable", file_row_text(page, file_id))
    lock_rows = [r.text for r in page.d.find_elements(By.CSS_SELECTOR, "#locks-table tbody tr")]
    report(any(file_id in r and "exclusive" in r and r.endswith("0 10") for r in lock_rows),
           "... and its byte-range lock", lock_rows)
    page.confirm_click("files-table", "data-file-id", file_id, "Close")
    gone = wait_for(lambda: open_in_cli(file_id) is None and page.row("files-table", "data-file-id", file_id) is None)
    st, _ = c.read_fid(fid, 10)
    report(gone and st == FILE_CLOSED, "Close ends the open: gone from status, the client's READ gets FILE_CLOSED",
           f"0x{st:08x}")

    # A durable open whose connection ended: kept, shown disconnected, and closed for good by Close.
    key = os.urandom(16)
    kept_fid, kept_id = durable_open(rawsmb, c, "kept.bin", key)
    c.abort()
    report(wait_for(lambda: "disconnected, closed in" in file_row_text(page, kept_id), timeout=12),
           "a durable open of a client gone away is listed as disconnected", file_row_text(page, kept_id))
    entry = open_in_cli(kept_id) or {}
    report(entry.get("disconnected") is True and entry.get("kept_for_ms", 0) > 0,
           "... as ringsmbctl status --json has it", entry)
    page.confirm_click("files-table", "data-file-id", kept_id, "Close")
    report(wait_for(lambda: open_in_cli(kept_id) is None), "Close ends the disconnected open")
    d = smb2user.logged_in("carol", "secret-C3", "docs")
    reconnect = rawsmb.create_contexts([(b"RqLs", key + struct.pack("<IIQ", 7, 0, 0)), (b"DHnC", kept_fid)])
    st, _ = d.create_ex("kept.bin", READ_WRITE, oplock=0xFF, contexts=reconnect)
    report(st == OBJECT_NAME_NOT_FOUND, "... so that its client's reconnect finds nothing", f"0x{st:08x}")

    # Closed elsewhere while the page still showed it: ringsmbctl's error.
    fid3, id3 = durable_open(rawsmb, d, "third.bin", os.urandom(16))
    wait_for(lambda: page.row("files-table", "data-file-id", id3))
    page.d.execute_script("clearInterval(timer)")  # the row stays while the test acts
    cli("file", "close", id3)
    wanted = cli("file", "close", id3).stderr.rstrip()
    page.confirm_click("files-table", "data-file-id", id3, "Close")
    report(wanted and wait_for(lambda: page.text("status-error") == wanted),
           "Close of an open closed meanwhile shows ringsmbctl's error", f"{wanted!r} {page.text('status-error')!r}")
    d.abort()
    page.tab("status")  # the refresh again


def open_edit_form(page):
    page.tab("shares")
    wait_for(lambda: page.row("shares-table", "data-name", "docs"))
    page.click_row_button("shares-table", "data-name", "docs", "Edit")
    wait_for(lambda: page.d.find_element(By.ID, "share-edit").is_displayed())


def edit_share(page, changes):
    open_edit_form(page)
    page.fill("share-edit", changes)
    return wait_for(lambda: "changed share 'docs'" in page.text("shares-message"))


def edit_tab(page):
    ok = edit_share(page, {"read only": "yes", "comment": "Read-only docs", "hosts deny": "10.0.0.0/8"})
    docs = {s["name"]: s for s in cli_json("share", "list")["shares"]}["docs"]
    report(ok and docs["read_only"] and docs["comment"] == "Read-only docs"
           and docs["settings"]["hosts deny"] == "10.0.0.0/8", "share edited through the page", docs)
    r = smbclient("carol%secret-C3", "docs", f"put {ENV['WORK']}/upload.txt second.txt")
    report("NT_STATUS_ACCESS_DENIED" in r.stdout + r.stderr, "the edited share refuses writes")
    open_edit_form(page)
    same_error_as_cli(page, "shares", "a bad value in the edit form",
                      ["share", "set", "docs", "--option", "create mask = banana"],
                      "share-edit", {"create mask": "banana"})
    page.d.find_element(By.ID, "share-edit-cancel").click()
    ok = edit_share(page, {"read only": "no", "hosts deny": ""})
    docs = {s["name"]: s for s in cli_json("share", "list")["shares"]}["docs"]
    report(ok and not docs["read_only"] and docs["settings"]["hosts deny"] == "", "an emptied setting is unset", docs)


def status_tab(page):
    # A session of an earlier step's client may still be listed for a
    # moment after that client was killed: the new one is not among these.
    earlier = {s["session_id"] for s in cli_json("status")["sessions"]}
    client = subprocess.Popen(["smbclient", "//127.0.0.1/docs", "-p", ENV["SMB_PORT"], "-U", "carol%secret-C3"],
                              stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, text=True)
    client.stdin.write("open upload.txt\n")
    client.stdin.flush()
    try:
        page.tab("status")
        def carols_session():  # its id (the table is re-rendered every 5 s)
            rows = page.d.find_elements(By.CSS_SELECTOR, "#sessions-table tbody tr")
            ids = (r.get_attribute("data-session-id") for r in rows if "carol" in r.text)
            return next((i for i in ids if i not in earlier), None)
        sid = wait_for(carols_session) or ""
        report(sid, "the status tab lists the new user's session")
        listed = next((s for s in cli_json("status")["sessions"] if s["session_id"] == sid), {})
        cell = "1: " + ", ".join(c["client"] for c in listed.get("channels", []))
        def channel_cell():
            row = page.row("sessions-table", "data-session-id", sid)
            return row is not None and cell in row.text
        report(len(listed.get("channels", [])) == 1 and wait_for(channel_cell),
               "the session's row shows its one channel, the client's address:port as in ringsmbctl status", cell)
        report(wait_for(lambda: "upload.txt" in page.d.find_element(By.ID, "files-table").text),
               "the status tab lists the open file")
        page.confirm_click("sessions-table", "data-session-id", sid, "Close")
        gone = wait_for(lambda: not any(s["session_id"] == sid for s in cli_json("status")["sessions"]))
        report(gone and wait_for(lambda: page.row("sessions-table", "data-session-id", sid) is None),
               "Close ends the session (gone from ringsmbctl status and from the page)")
    finally:
        client.kill()
        client.wait()


def counters_tab(page):
    page.tab("counters")

    def requests():
        for row in page.d.find_elements(By.CSS_SELECTOR, "#counters-table tbody tr"):
            cells = row.find_elements(By.TAG_NAME, "td")
            if cells and cells[0].text == "ringsmb_requests_total":
                return float(cells[1].text)
        return 0
    report(wait_for(requests), "the counters tab shows ringsmb_requests_total")
    report(wait_for(lambda: page.d.execute_script("return document.getElementById('chart-requests')"
                                                  ".toDataURL().length") > 1000, timeout=12),
           "the requests chart has been drawn")


def password_and_delete(page):
    page.tab("users")
    wait_for(lambda: page.row("users-table", "data-name", "carol"))
    page.click_row_button("users-table", "data-name", "carol", "Set password")
    page.fill("user-passwd", {"password": "secret-C4"})
    report(wait_for(lambda: "changed password for user 'carol'" in page.text("users-message")), "password set")
    r = smbclient("carol%secret-C4", "docs", "ls")
    report(r.returncode == 0, "smbclient logs in with the new password", r.stdout + r.stderr)
    page.confirm_click("users-table", "data-name", "carol", "Delete")
    report(wait_for(lambda: page.row("users-table", "data-name", "carol") is None), "user deleted through the page")
    r = smbclient("carol%secret-C4", "docs", "ls")
    report("NT_STATUS_LOGON_FAILURE" in r.stdout + r.stderr, "the deleted user cannot log in")
    page.tab("shares")
    wait_for(lambda: page.row("shares-table", "data-name", "docs"))
    page.confirm_click("shares-table", "data-name", "docs", "Delete")
    report(wait_for(lambda: page.row("shares-table", "data-name", "docs") is None)
           and "docs" not in [s["name"] for s in cli_json("share", "list")["shares"]], "share deleted through the page")


def service_tab(page):
    page.tab("service")
    # systemctl's answer: the unit's properties, or its own error where
    # systemd does not run (a container).
    shown = wait_for(lambda: page.text("service-state") or page.text("service-error"))
    report(shown, "the service tab shows systemctl's answer", shown)


def unprivileged(page):
    """The bridge runs as an ordinary user: the page can do no more than
    ringsmbctl lets that user do, and says so with ringsmbctl's words."""
    page.tab("users")
    expected = cli("user", "list", "--json")
    wanted = expected.stderr.rstrip()
    report(expected.returncode == 5 and wait_for(lambda: page.text("users-error") == wanted),
           "as an ordinary user, the users tab shows ringsmbctl's permission error",
           f"CLI exit {expected.returncode} {wanted!r}, page {page.text('users-error')!r}")
    page.tab("shares")
    same_error_as_cli(page, "shares", "as an ordinary user, adding a share",
                      ["share", "add", "sneaky", "--path", ENV["SHARE_DIR"]],
                      "share-add", {"name": "sneaky", "path": ENV["SHARE_DIR"]})
    shares = subprocess.run([CTL, "share", "list", "--json"], capture_output=True, text=True).stdout
    report("sneaky" not in shares, "... and the share was not added")


def main():
    driver = start_browser()
    try:
        driver.get(ENV["COCKPIT_URL"])
        page = Page(driver)
        if not wait_for(lambda: driver.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "yes"):
            report(False, "the page loads")
            return 1
        if ENV.get("UNPRIVILEGED_AS"):
            unprivileged(page)
            return 1 if failures else 0
        for step in (service_tab, users_tab, shares_tab):
            step(page)
        smb_uses_them()
        for step in (enable_disable, edit_tab, files_and_locks, status_tab, counters_tab, password_and_delete):
            step(page)
        severe = [e["message"] for e in driver.get_log("browser") if e["level"] == "SEVERE"]
        report(not severe, "no script errors in the browser console", severe)
    finally:
        driver.quit()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
