#!/usr/bin/env python3
"""The operator console in a real browser (headless Chromium through Selenium), against a real
photosd: signs in, watches a new session appear, reads its timeline, travels back to an earlier
step, signs the session in and completes its purchase from the page, and checks what a viewer
and a forged request may not do. Saves a screenshot of each page.

Run by ConsoleBrowserTests (swift test); by hand:
  console_browser_test.py --console http://127.0.0.1:8081 --api http://127.0.0.1:8080 \
      --operator NAME:PASSWORD --viewer NAME:PASSWORD --user alice --screenshots DIR
Prints one line per check; exits 1 at the first that fails.
"""
import argparse
import json
import os
import sys
import time
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import TimeoutException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support import expected_conditions as ec
from selenium.webdriver.support.ui import WebDriverWait

args = argparse.ArgumentParser()
args.add_argument("--console", required=True)
args.add_argument("--api", required=True)
args.add_argument("--operator", required=True)
args.add_argument("--viewer", required=True)
args.add_argument("--user", required=True)
args.add_argument("--screenshots", required=True)
options = args.parse_args()
os.makedirs(options.screenshots, exist_ok=True)


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what, flush=True)
    if not condition:
        raise SystemExit(1)


SECRETS = {}  # session id -> its secret, as POST /v1/sessions returned it


def api(method, path, body=None):
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Content-Type": "application/json"}
    parts = [p for p in path.split("/") if p]
    if len(parts) >= 3 and parts[:2] == ["v1", "sessions"] and parts[2] in SECRETS:
        headers["Authorization"] = "Session " + SECRETS[parts[2]]
    request = urllib.request.Request(options.api + path, data=data, method=method, headers=headers)
    with urllib.request.urlopen(request, timeout=10) as response:
        answer = json.load(response)
    if "sessionSecret" in answer:
        SECRETS[answer["id"]] = answer["sessionSecret"]
    return answer


def browser():
    chrome = webdriver.ChromeOptions()
    for flag in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900", "--disable-gpu"]:
        chrome.add_argument(flag)
    chrome.binary_location = "/usr/bin/chromium"
    chrome.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=chrome)


def wait(driver, condition, seconds=15):
    return WebDriverWait(driver, seconds).until(condition)


def shot(driver, name):
    path = os.path.join(options.screenshots, name + ".png")
    driver.save_screenshot(path)
    print("     screenshot " + path, flush=True)


def sign_in(driver, credentials):
    name, password = credentials.split(":", 1)
    driver.get(options.console + "/console/sign-in")
    driver.find_element(By.NAME, "username").send_keys(name)
    driver.find_element(By.NAME, "password").send_keys(password)
    driver.find_element(By.CSS_SELECTOR, "form.card button[type=submit]").click()
    wait(driver, ec.presence_of_element_located((By.CSS_SELECTOR, "table.sessions")))


def post_without_page(driver, path, fields):
    """A POST made by script in the page, as a forged request would be; returns the status."""
    return driver.execute_async_script(
        """
        const [path, fields, done] = arguments;
        fetch(path, {method: "POST", body: new URLSearchParams(fields), redirect: "manual", credentials: "same-origin"})
            .then(r => done(r.status)).catch(e => done("error " + e));
        """, path, fields)


def csp_violations(driver):
    return [entry["message"] for entry in driver.get_log("browser") if "Content Security Policy" in entry["message"]]


operator = browser()
viewer = None
try:
    # Sign in.
    operator.get(options.console + "/console/sessions")
    check("/console/sign-in" in operator.current_url, "a page asked for without a session leads to the sign-in form")
    shot(operator, "sign-in")
    sign_in(operator, options.operator)
    cookie = next(c for c in operator.get_cookies() if c["name"] == "photosd_console")
    check(cookie["httpOnly"] and cookie.get("sameSite") == "Strict" and cookie["path"] == "/console" and not cookie["secure"],
          "the session cookie is HttpOnly, SameSite=Strict, Path=/console (not Secure without console.secureCookies): %s" % cookie)

    # A session a client creates now appears without a reload (server-sent events).
    time.sleep(1.5)
    session = api("POST", "/v1/sessions", {})
    sid = session["id"]
    try:
        wait(operator, ec.presence_of_element_located((By.CSS_SELECTOR, 'tr[data-session-id="%s"]' % sid)))
        appeared = True
    except TimeoutException:
        appeared = False
    check(appeared, "the sessions list shows the session a client just created, without a reload")
    api("POST", "/v1/sessions/%s/actions" % sid, {"action": "selectPhoto", "photoId": 1})
    api("POST", "/v1/sessions/%s/actions" % sid, {"action": "buy"})
    operator.refresh()
    wait(operator, ec.presence_of_element_located((By.CSS_SELECTOR, 'tr[data-session-id="%s"]' % sid)))
    shot(operator, "sessions")

    # Its page: the stacks, the tree, the timeline.
    operator.find_element(By.CSS_SELECTOR, 'tr[data-session-id="%s"] a' % sid).click()
    wait(operator, ec.presence_of_element_located((By.CSS_SELECTOR, "section.timeline")))
    steps = operator.find_elements(By.CSS_SELECTOR, "li.step")
    check(len(steps) >= 8, "the timeline holds the session's steps (%d)" % len(steps))
    groups = [g.text.split("\n")[0] for g in operator.find_elements(By.CSS_SELECTOR, ".group-head")]
    check(any(g.startswith("selectPhoto") for g in groups) and any(g.startswith("buy") for g in groups),
          "steps are grouped by the action that caused them: %s" % groups)
    top = operator.find_element(By.CSS_SELECTOR, ".screen.top").text
    check(top == "signIn", "the top screen is signIn (%s)" % top)
    shot(operator, "session")

    # The trail follows live.
    api("POST", "/v1/sessions/%s/actions" % sid, {"action": "cancel"})
    try:
        wait(operator, lambda d: len(d.find_elements(By.CSS_SELECTOR, "li.step")) > len(steps))
        followed = True
    except TimeoutException:
        followed = False
    check(followed, "a step taken by the client appears on the open page")

    # An earlier step: the stacks as they were then.
    operator.find_element(By.CSS_SELECTOR, 'li.step[data-seq="3"] a').click()
    wait(operator, ec.text_to_be_present_in_element((By.CSS_SELECTOR, "p.summary"), "As it was after step 3"))
    screens = [s.get_attribute("data-screen") for s in operator.find_elements(By.CSS_SELECTOR, ".stack [data-screen]")]
    check(screens == ["photos"], "step 3 shows the earlier stacks: %s" % screens)
    check(not operator.find_elements(By.CSS_SELECTOR, "section.operator-actions"), "no actions on a past state")
    shot(operator, "session-at-step")

    # Back to the buy screen, then act from the page: sign in as the user, complete the purchase.
    api("POST", "/v1/sessions/%s/actions" % sid, {"action": "buy"})
    operator.get(options.console + "/console/sessions/" + sid)
    operator.find_element(By.CSS_SELECTOR, "section.operator-actions input[name=username]").send_keys(options.user)
    operator.find_element(By.CSS_SELECTOR, 'button[data-action="sign-in"]').click()
    wait(operator, ec.alert_is_present()).accept()
    wait(operator, ec.text_to_be_present_in_element((By.CSS_SELECTOR, "p.notice"), "Signed in."))
    operator.find_element(By.CSS_SELECTOR, 'button[data-action="purchase"]').click()
    wait(operator, ec.alert_is_present()).accept()
    wait(operator, ec.text_to_be_present_in_element((By.CSS_SELECTOR, "p.notice"), "Purchase completed."))
    trail = operator.find_element(By.CSS_SELECTOR, "section.timeline").text
    check("purchase.completed" in trail and "operator:" in trail, "the trail shows the purchase, by the operator")

    # A request without the CSRF token is refused, even from the console's own page.
    status = post_without_page(operator, "/console/sessions/%s/purchase" % sid, {})
    check(status == 403, "a post without the CSRF token is refused (%s)" % status)

    # The audit page verifies in the background; the funnel draws its chart.
    operator.get(options.console + "/console/audit")
    operator.find_element(By.CSS_SELECTOR, "section.verify button").click()
    wait(operator, ec.presence_of_element_located((By.CSS_SELECTOR, '[data-verify="ok"]')), 30)
    check("audit trail intact" in operator.find_element(By.CSS_SELECTOR, "[data-verify]").text, "the verify says the trail is intact")
    shot(operator, "audit")
    operator.get(options.console + "/console/funnel")
    wait(operator, lambda d: d.execute_script("const i = document.querySelector('img.chart'); return i.complete && i.naturalWidth > 0"))
    check(True, "the funnel's chart loads")
    shot(operator, "funnel")
    operator.set_window_size(420, 900)
    operator.get(options.console + "/console/sessions/" + sid)
    shot(operator, "session-narrow")
    violations = csp_violations(operator)
    check(not violations, "no Content-Security-Policy violation on any page: %s" % violations)

    # A viewer sees no action buttons, and a post of theirs is refused.
    viewer = browser()
    sign_in(viewer, options.viewer)
    viewer.get(options.console + "/console/sessions/" + sid)
    check(not viewer.find_elements(By.CSS_SELECTOR, "section.operator-actions button"), "a viewer sees no action buttons")
    token = viewer.find_element(By.CSS_SELECTOR, "form.signout input[name=csrf]").get_attribute("value")
    status = post_without_page(viewer, "/console/sessions/%s/purchase" % sid, {"csrf": token})
    check(status == 403, "a viewer's post is refused (%s)" % status)
    print("all checks passed", flush=True)
except Exception as error:  # a wait that timed out, an element not found: say where it happened
    print("FAIL %s: %s at %s" % (type(error).__name__, str(error).strip()[:300], operator.current_url), flush=True)
    print("     page text: " + operator.find_element(By.TAG_NAME, "body").text[:500].replace("\n", " | "), flush=True)
    raise SystemExit(1)
finally:
    operator.quit()
    if viewer:
        viewer.quit()
