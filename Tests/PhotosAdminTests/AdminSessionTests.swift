import Foundation
import Navigation
import PhotosCore
import PhotosModel
import PhotosStorage
import PhotosTestSupport
import PhotosdProcess
import Sessions
import SQLiteStore
import Synchronization
import Testing

@Suite("photos-admin sessions", .serialized)
struct AdminSessionTests {
    /// A database with photo 1, user bob, and a session waiting on sign-in inside a horizontal
    /// purchase of photo 1 (created in this process, as photosd would).
    func prepared() async throws -> (TemporaryDirectory, [String], String) {
        let directory = try TemporaryDirectory()
        let db = ["--db", directory.file("photos.db")]
        _ = try await AdminProcess.admin(["migrate"] + db, in: directory.path)
        _ = try await AdminProcess.admin(["photos", "add", "--title", "Sunset", "--price", "2.50"] + db, in: directory.path)
        _ = try await AdminProcess.admin(["users", "add", "bob", "--password-stdin"] + db, stdin: "password123", in: directory.path)
        let database = try PhotosDatabase.open(path: db[1])
        defer { database.close() }
        var configuration = PhotosConfiguration()
        configuration.databasePath = db[1]
        configuration.bcryptCost = 4
        let sessions = try PhotosServices(configuration: configuration, database: database).sessions
        let id = try await sessions.createSession().session.id
        _ = try await sessions.apply(ClientAction(.selectPhoto, photoId: 1), to: id)
        _ = try await sessions.apply(ClientAction(.buy), to: id)
        return (directory, db, id)
    }

    @Test("list and show draw the stacks and the coordinator tree")
    func listAndShow() async throws {
        let (directory, db, id) = try await prepared()
        defer { directory.remove() }
        let list = try await AdminProcess.admin(["sessions", "list"] + db, in: directory.path)
        #expect(list.status == 0)
        #expect(list.stdout.contains(id) && list.stdout.contains("signIn"))
        let show = try await AdminProcess.admin(["sessions", "show", id] + db, in: directory.path)
        #expect(show.status == 0, "\(show.stderr)")
        #expect(show.stdout.contains("root : photos > photo(1) > signIn"), "\(show.stdout)")
        #expect(show.stdout.contains("top: signIn [submit, cancel, back]"))
        #expect(show.stdout.contains("└─ buy (buy-"), "\(show.stdout)")
        let json = try await AdminProcess.admin(["sessions", "show", id, "--format", "json"] + db, in: directory.path)
        let decoded = try JSONDecoder().decode(Snapshot.self, from: Data(json.stdout.utf8))
        #expect(decoded.session.top?.screen == .signIn)
        #expect(decoded.session.version == 3)
    }

    @Test("an edited trail is not replayed with defaults: sessions show --at names the step it cannot follow and exits 3")
    func editedTrail() async throws {
        let (directory, db, id) = try await prepared()
        defer { directory.remove() }
        // The purchase flow's start loses its photo (as by hand, past the trigger).
        let edit = try await AdminProcess.shell(
            "sqlite3 \(db[1]) \"DROP TRIGGER audit_events_no_update; UPDATE audit_events SET detail = json_remove(detail, '$.photoId') "
                + "WHERE session_id = '\(id)' AND step = 'coordinator.start' AND coordinator = 'app/buy' RETURNING seq;\"",
            in: directory.path)
        #expect(edit.status == 0, "\(edit.stderr)")
        let seq = edit.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(Int(seq) != nil, "\(edit.stdout)")
        let shown = try await AdminProcess.admin(["sessions", "show", id, "--at", seq] + db, in: directory.path)
        #expect(shown.status == 3, "\(shown.status) \(shown.output)")
        #expect(shown.stderr.contains("audit seq \(seq): coordinator.start of a purchase flow without its presentation and photoId"), "\(shown.stderr)")
        #expect(shown.stderr.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "\n").count == 1, "\(shown.stderr)")
        #expect(!shown.stdout.contains("buy(0)"), "\(shown.stdout)")
        // Before the edited step the trail replays as it was.
        let before = try await AdminProcess.admin(["sessions", "show", id, "--at", "3"] + db, in: directory.path)
        #expect(before.status == 0, "\(before.output)")
    }

    struct Snapshot: Decodable {
        let session: SessionView
        let asOfSeq: Int?
    }

    @Test("sign-in --session resumes the flow to buy; purchase --session completes it; --at rebuilds the past")
    func operatorCompletesFlow() async throws {
        let (directory, db, id) = try await prepared()
        defer { directory.remove() }
        let early = try await AdminProcess.admin(["purchase", "--session", id] + db, in: directory.path)
        #expect(early.status != 0)
        #expect(early.stderr.contains("is on the signIn screen, not buy"))

        let signIn = try await AdminProcess.admin(["sign-in", "bob", "--session", id] + db, in: directory.path)
        #expect(signIn.status == 0, "\(signIn.stderr)")
        #expect(signIn.stdout.trimmingCharacters(in: .whitespacesAndNewlines).count >= 43)
        let waiting = try await AdminProcess.admin(["sessions", "show", id] + db, in: directory.path)
        #expect(waiting.stdout.contains("root : photos > photo(1) > buy(1)"), "\(waiting.stdout)")
        #expect(waiting.stdout.contains("signed in as bob"))

        let bought = try await AdminProcess.admin(["purchase", "--session", id] + db, in: directory.path)
        #expect(bought.status == 0, "\(bought.stderr)")
        #expect(bought.stdout.contains("purchase completed"))
        let done = try await AdminProcess.admin(["sessions", "show", id] + db, in: directory.path)
        #expect(done.stdout.contains("root : photos > photo(1, purchased)"), "\(done.stdout)")

        // Step 3 is the first screen.push: the state then was just [photos].
        let past = try await AdminProcess.admin(["sessions", "show", id, "--at", "3", "--format", "json"] + db, in: directory.path)
        let snapshot = try JSONDecoder().decode(Snapshot.self, from: Data(past.stdout.utf8))
        #expect(snapshot.asOfSeq == 3)
        #expect(snapshot.session.navigation.map { $0.screens.map(\.screen) } == [[.photos]])
        let audit = try await AdminProcess.admin(["audit", "--session", id, "--format", "json"] + db, in: directory.path)
        #expect(audit.stdout.contains("operator:tester"))
        let verify = try await AdminProcess.admin(["audit", "verify"] + db, in: directory.path)
        #expect(verify.status == 0)
        let missing = try await AdminProcess.admin(["sessions", "show", "nope"] + db, in: directory.path)
        #expect(missing.status != 0)
        #expect(missing.stderr.contains("no session nope"))
    }
}

extension AdminSessionTests {
    @Test("a tabs session: show draws the tab bar and each tab's stack (now and --at); sign-in and purchase --session work on it")
    func tabsSession() async throws {
        let (directory, db, _) = try await prepared()
        defer { directory.remove() }
        let database = try PhotosDatabase.open(path: db[1])
        var configuration = PhotosConfiguration()
        configuration.databasePath = db[1]
        configuration.bcryptCost = 4
        let sessions = try PhotosServices(configuration: configuration, database: database).sessions
        let id = try await sessions.createSession(layout: .tabs, link: .buy(1)).session.id
        await database.close()

        let waiting = try await AdminProcess.admin(["sessions", "show", id] + db, in: directory.path)
        #expect(waiting.status == 0, "\(waiting.stderr)")
        #expect(waiting.stdout.contains("tab bar: [photos] |  purchases "), "\(waiting.stdout)")
        #expect(waiting.stdout.contains("* photos: photos > photo(1) > signIn"), "\(waiting.stdout)")
        #expect(waiting.stdout.contains("  purchases: purchases(none)"), "\(waiting.stdout)")
        #expect(waiting.stdout.contains("tab photos: photos > photo(1) > signIn"), "\(waiting.stdout)")
        #expect(waiting.stdout.contains("├─ tab (tab-photos)") && waiting.stdout.contains("└─ tab (tab-purchases)"), "\(waiting.stdout)")

        await #expect(try AdminProcess.admin(["sign-in", "bob", "--session", id] + db, in: directory.path).status == 0)
        let bought = try await AdminProcess.admin(["purchase", "--session", id] + db, in: directory.path)
        #expect(bought.status == 0, "\(bought.stderr)")
        let done = try await AdminProcess.admin(["sessions", "show", id, "--format", "json"] + db, in: directory.path)
        let snapshot = try JSONDecoder().decode(Snapshot.self, from: Data(done.stdout.utf8))
        #expect(snapshot.session.tabs?.items.last?.screens.first?.photos?.map(\.id) == [1], "the purchase is not on the purchases tab")
        let drawn = try await AdminProcess.admin(["sessions", "show", id] + db, in: directory.path)
        #expect(drawn.stdout.contains("  purchases: purchases(1)"), "\(drawn.stdout)")

        // --at rebuilds the tab bar from the trail alone: right after the tabs started (step 6).
        let past = try await AdminProcess.admin(["sessions", "show", id, "--at", "6"] + db, in: directory.path)
        #expect(past.status == 0, "\(past.stderr)")
        #expect(past.stdout.contains("* photos: photos\n"), "\(past.stdout)")
        #expect(past.stdout.contains("  purchases: purchases\n"), "\(past.stdout)")
        await #expect(try AdminProcess.admin(["audit", "verify"] + db, in: directory.path).status == 0)
    }
}

@Suite("photos-admin audit --follow")
struct AuditFollowTests {
    @Test("--follow prints rows written after it started, as they come")
    func follow() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let db = directory.file("photos.db")
        _ = try await AdminProcess.admin(["migrate", "--db", db], in: directory.path)
        _ = try await AdminProcess.admin(["photos", "add", "--title", "First", "--price", "1", "--db", db], in: directory.path)
        let output = StreamedOutput()
        let process = try spawnProcess(
            BuiltProducts.binDirectory + "/photos-admin", ["audit", "--follow", "--format", "json", "--limit", "1", "--db", db],
            stdout: output.pipe.fileHandleForWriting.fileDescriptor)
        try output.pipe.fileHandleForWriting.close()
        defer { if process.isRunning { process.signal(SIGTERM) } }
        // Waits for lines rather than sleeping a guessed time: a busy machine (CI) may take
        // seconds to start a debug binary.
        #expect(await output.waitForLines(1), "the newest row was not printed: \(output.lines)")
        _ = try await AdminProcess.admin(["photos", "add", "--title", "Second", "--price", "2", "--db", db], in: directory.path)
        #expect(await output.waitForLines(2), "the row written later was not printed: \(output.lines)")
        #expect(process.isRunning, "--follow stopped by itself")
        process.signal(SIGTERM)
        process.waitForExit()
        let lines = output.lines
        struct Printed: Decodable { let seq: Int; let step: String; let detail: [String: Int] }
        let rows = lines.compactMap { try? JSONDecoder().decode(Printed.self, from: Data($0.utf8)) }
        #expect(rows.count == lines.count, "--format json printed a line that is not a JSON row: \(lines)")
        #expect(rows.map(\.seq) == [1, 2], "\(lines)")
        #expect(rows.allSatisfy { $0.step == "photo.added" })
    }
}

/// A running process's standard output, collected as it comes.
final class StreamedOutput: Sendable {
    let pipe = Pipe()
    private let data = Mutex(Data())

    init() {
        pipe.fileHandleForReading.readabilityHandler = { [weak self] handle in
            let chunk = handle.availableData
            self?.data.withLock { $0.append(chunk) }
        }
    }

    deinit { pipe.fileHandleForReading.readabilityHandler = nil }

    /// The complete lines so far.
    var lines: [String] {
        let text = data.withLock { String(decoding: $0, as: UTF8.self) }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()  // the unfinished line after the last newline ("" when there is none)
        return lines
    }

    /// Waits until at least `count` complete lines have come, at most `seconds`; true if they did.
    func waitForLines(_ count: Int, seconds: Int = 30) async -> Bool {
        let limit = ContinuousClock.now + .seconds(seconds)
        while lines.count < count && ContinuousClock.now < limit {
            try? await Task.sleep(for: .milliseconds(20))
        }
        return lines.count >= count
    }
}
