import Foundation
import PhotosTestSupport
import Testing

/// The operator console in a real headless browser (Chromium through Selenium:
/// Tests/Browser/console_browser_test.py) against a real photosd, on both stores. Screenshots of
/// each page land in `.build/console-screenshots/<store>/` for a person to look at.
///
/// Skipped only where no browser is installed, unless `PHOTOSD_REQUIRE_BROWSER` is set (as
/// `scripts/test` does, after `scripts/install-dependencies` installed one): then it fails.
/// One store at a time (`.serialized`): two browsers and their photosd at once are a heavy load
/// for CI's two cores.
@Suite("Operator console in a browser", .enabled(if: Browser.runnable, Browser.reason), .serialized)
struct ConsoleBrowserTests {
    @Test("sign in, a new session appears live, its timeline and an earlier step, actions from the page, a viewer and a forged post refused", arguments: TestStore.all)
    func console(store: TestStore) async throws {
        #expect(Browser.installed, "scripts/install-dependencies did not install the browser")
        guard Browser.installed else { return }
        let f = try await ConsoleTests.Fixture.start(store)
        defer { f.close() }
        let screenshots = BuiltProducts.packageRoot + "/.build/console-screenshots/\(store.rawValue)"
        let python = PythonTools.command([
                BuiltProducts.packageRoot + "/Tests/Browser/console_browser_test.py",
                "--console", f.console.baseURL, "--api", f.daemon.baseURL,
                "--operator", "otto:" + ConsoleTests.operatorPassword, "--viewer", "vera:" + ConsoleTests.viewerPassword,
                "--user", "alice", "--screenshots", screenshots,
            ])
        let result = try await runProcess(python.executable, python.arguments, in: f.harness.directory.path)
        #expect(result.status == 0, "\(result.output)")
        #expect(result.stdout.contains("all checks passed"), "\(result.output)")
        for page in ["sign-in", "sessions", "session", "session-at-step", "audit", "funnel", "session-narrow"] {
            #expect(FileManager.default.fileExists(atPath: screenshots + "/\(page).png"), "no screenshot of \(page)")
        }
    }
}

/// Whether a headless browser is here to drive.
enum Browser {
    static let installed = FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver")
        && PythonTools.canImport("selenium")
    static let required = ProcessInfo.processInfo.environment["PHOTOSD_REQUIRE_BROWSER"] != nil
    static var runnable: Bool { installed || required }
    static var reason: Comment { "no chromium, chromedriver and selenium (scripts/install-dependencies installs them)" }
}
