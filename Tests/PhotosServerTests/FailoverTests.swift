import AuditTrail
import Foundation
import PhotosTestSupport
import PhotosdProcess
import Synchronization
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// A PostgreSQL failover under load, on loopback: a primary and a streaming standby made with
/// `pg_basebackup` (`scripts/postgres-test-server standby`), photosd on a two-host URL with
/// `target_session_attrs=read-write`, the primary killed and the standby promoted while clients act.
///
/// Synchronous replication: photosd follows the promoted standby by itself, no acknowledged action
/// is lost, and every checkpoint signed before and after the failover extends the ones before it.
/// Asynchronous, the link cut before the loss: the standby lacks rows the key signed, and photosd,
/// following it, refuses to sign (`/readyz` 503 `log`) instead of signing a contradicting tree.
@Suite("PostgreSQL failover: no acknowledged action lost, no fork under the key", .serialized, .enabled(if: PostgresTestDatabase.available, PostgresTestDatabase.reason))
struct FailoverTests {
    static var script: String { Daemon.packageRoot + "/scripts/postgres-test-server" }

    static func server(_ arguments: [String]) async throws -> String {
        let result = try await runProcess(script, arguments, in: Daemon.packageRoot)
        guard result.status == 0 else { throw FailoverError(message: "postgres-test-server \(arguments.first ?? ""): \(result.output)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A primary, its standby and photosd on the two-host URL, in a directory of their own;
    /// `close` stops all three and removes it (the servers first: none is left running).
    final class Cluster: Sendable {
        let directory: TemporaryDirectory
        let primaryDir: String
        let standbyDir: String
        let daemon: Daemon

        private init(directory: TemporaryDirectory, daemon: Daemon) {
            self.directory = directory
            self.primaryDir = directory.file("primary")
            self.standbyDir = directory.file("standby")
            self.daemon = daemon
        }

        static func start(synchronous: Bool) async throws -> Cluster {
            let directory = try TemporaryDirectory()
            let primaryDir = directory.file("primary"), standbyDir = directory.file("standby")
            do {
                let primaryURL = try await FailoverTests.server(["start", primaryDir])
                let standbyPort = try await FailoverTests.server(["standby", primaryDir, standbyDir, synchronous ? "--sync" : "--async"])
                let primaryHost = primaryURL.split(separator: "@").last?.split(separator: "/").first.map(String.init) ?? ""
                let url = "postgres://postgres@\(primaryHost),127.0.0.1:\(standbyPort)/postgres?target_session_attrs=read-write"
                let daemon = try await Daemon(
                    ["--seed-demo", "--db", url], in: directory.path,
                    environment: [
                        "PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1", "PHOTOSD_DATABASE_DURABILITY": "full",
                        "PHOTOSD_LIMITS_SESSIONS_PER_MINUTE_PER_ADDRESS": "100000",
                    ])
                return Cluster(directory: directory, daemon: daemon)
            } catch {
                stopServers(primaryDir, standbyDir)
                directory.remove()
                throw error
            }
        }

        static func stopServers(_ directories: String...) {
            for directory in directories { _ = try? runProcessBlocking(FailoverTests.script, ["stop", directory], in: Daemon.packageRoot) }
        }

        func close() {
            _ = daemon.stop()
            Self.stopServers(standbyDir, primaryDir)
            directory.remove()
        }
    }

    struct FailoverError: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// The clients' acknowledged work: the highest version each session was acknowledged at.
    final class Acknowledged: Sendable {
        let versions = Mutex<[String: Int]>([:])
        let refused = Mutex(0)

        func record(_ id: String, _ version: Int) {
            versions.withLock { $0[id] = max($0[id] ?? 0, version) }
        }
    }

    /// `clients` loops of create, select, back … until `stop` says so; every 2xx is recorded.
    static func load(_ daemon: Daemon, clients: Int, acknowledged: Acknowledged, stop: Flag) async {
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<clients {
                group.addTask {
                    var session: String?
                    var step = 0
                    while !stop.isSet {
                        do {
                            if let id = session {
                                let action = step % 2 == 0 ? #"{"action":"selectPhoto","photoId":1}"# : #"{"action":"back"}"#
                                let (status, body) = try await daemon.request("POST", "/v1/sessions/\(id)/actions", body: action)
                                if status == 200, let version = (body["session"] as? [String: Any])?["version"] as? Int {
                                    acknowledged.record(id, version)
                                    step += 1
                                    if step == 6 { session = nil }
                                } else {
                                    acknowledged.refused.withLock { $0 += 1 }
                                    if status != 503 { session = nil }
                                    try await Task.sleep(for: .milliseconds(50))
                                }
                            } else {
                                let (status, body) = try await daemon.request("POST", "/v1/sessions")
                                if status == 201, let id = body["id"] as? String, let version = body["version"] as? Int {
                                    acknowledged.record(id, version)
                                    session = id
                                    step = 0
                                } else {
                                    acknowledged.refused.withLock { $0 += 1 }
                                    try await Task.sleep(for: .milliseconds(50))
                                }
                            }
                        } catch {
                            acknowledged.refused.withLock { $0 += 1 }
                            try? await Task.sleep(for: .milliseconds(50))
                        }
                    }
                }
            }
        }
    }

    /// A flag the loops read.
    final class Flag: Sendable {
        private let value = Atomic<Bool>(false)
        var isSet: Bool { value.load(ordering: .relaxed) }
        func set() { value.store(true, ordering: .relaxed) }
    }

    /// The notes photosd served, fetched now and then (distinct, in order).
    final class Notes: Sendable {
        let seen = Mutex<[String]>([])
        func add(_ note: String) { seen.withLock { if $0.last != note { $0.append(note) } } }
    }

    static func watchNotes(_ daemon: Daemon, into notes: Notes, stop: Flag) async {
        while !stop.isSet {
            if let (data, response) = try? await URLSession.shared.data(from: URL(string: daemon.baseURL + "/v1/log/checkpoint")!),
               (response as? HTTPURLResponse)?.statusCode == 200 {
                notes.add(String(decoding: data, as: UTF8.self))
            }
            try? await Task.sleep(for: .milliseconds(300))
        }
    }

    static func waitUntil(_ seconds: Int, _ condition: () async throws -> Bool) async throws -> Bool {
        let limit = ContinuousClock.now + .seconds(seconds)
        while ContinuousClock.now < limit {
            if try await condition() { return true }
            try await Task.sleep(for: .milliseconds(200))
        }
        return try await condition()
    }

    @Test("synchronous replication: the primary killed under load, the standby promoted — photosd follows it through the two-host URL, 0 acknowledged actions lost, every checkpoint extends the earlier ones")
    func synchronous() async throws {
        let cluster = try await Cluster.start(synchronous: true)
        defer { cluster.close() }
        let daemon = cluster.daemon, primaryDir = cluster.primaryDir, standbyDir = cluster.standbyDir
        #expect(daemon.log.contains("none of them synchronous") == false, "no warning with a synchronous standby")

        let acknowledged = Acknowledged()
        let notes = Notes()
        let stop = Flag()
        async let loading: Void = Self.load(daemon, clients: 4, acknowledged: acknowledged, stop: stop)
        async let watching: Void = Self.watchNotes(daemon, into: notes, stop: stop)
        // Load before the loss: at least 20 sessions acknowledged (a loaded machine takes longer).
        // and a checkpoint signed over them, so that the failover falls between signed trees.
        // (Under the full suite on two cores, 60 s once gave fewer than 20: it waits up to 180 s.)
        let loaded = try await Self.waitUntil(180) { acknowledged.versions.withLock { $0.count } >= 20 && notes.seen.withLock { $0.count } >= 2 }
        #expect(loaded, "the load before the failover never reached 20 sessions and 2 checkpoints")
        let before = acknowledged.versions.withLock { $0.count }
        let notesBefore = notes.seen.withLock { $0.count }
        _ = try await Self.server(["kill", primaryDir])
        _ = try await Self.server(["promote", standbyDir])
        // photosd follows: acknowledged work goes on on the promoted standby.
        let followed = try await Self.waitUntil(60) {
            acknowledged.versions.withLock { $0.count } > before + 10 && daemon.log.contains("following the writable PostgreSQL host")
        }
        // and checkpoints go on over the promoted standby's tree.
        let signedAfter = try await Self.waitUntil(60) { notes.seen.withLock { $0.count } >= notesBefore + 2 }
        stop.set()
        _ = await (loading, watching)
        #expect(followed, "\(daemon.log.suffix(2_000))")
        #expect(signedAfter, "no checkpoint after the failover: \(daemon.log.split(separator: "\n").filter { $0.contains("audit") }.suffix(10))")

        // Nothing acknowledged is lost: every session is at least at the version it was acknowledged at.
        let versions = acknowledged.versions.withLock { $0 }
        #expect(versions.count > before && before >= 20, "\(before) sessions before the failover, \(versions.count) in all")
        var lost: [String] = []
        for (id, version) in versions {
            let (status, body) = try await daemon.request("GET", "/v1/sessions/\(id)")
            if status != 200 || (body["version"] as? Int ?? -1) < version { lost.append("\(id): \(status) \(body["version"] ?? "none") < \(version)") }
        }
        #expect(lost.isEmpty, "\(lost.count) of \(versions.count) acknowledged sessions lost: \(lost.prefix(5))")
        let refused = acknowledged.refused.withLock { $0 }
        print("failover (synchronous): \(versions.count) sessions, \(versions.values.reduce(0, +)) acknowledged versions, \(lost.count) lost, \(refused) answers refused or failed during the failover")
        #expect(try await Self.waitUntil(10) { try await daemon.request("GET", "/readyz").0 == 200 })

        // Every note served, before and after, extends the earlier ones (proofs from the new primary).
        let seen = notes.seen.withLock { $0 }
        #expect(notesBefore >= 2 && seen.count >= notesBefore + 2, "\(notesBefore) notes before the failover, \(seen.count) in all")
        try await Self.expectConsistent(seen, daemon: daemon)
        print("failover (synchronous): \(seen.count) checkpoints served, sizes \(seen.compactMap { try? LogCheckpoint(parsing: SignedNote(parsing: $0).text).size }), each consistent with every earlier one")
    }

    @Test("asynchronous replication, the link cut: the promoted standby lacks signed rows; photosd follows it, warns at start and signs nothing that contradicts what it signed")
    func asynchronous() async throws {
        let cluster = try await Cluster.start(synchronous: false)
        defer { cluster.close() }
        let daemon = cluster.daemon, directory = cluster.directory, primaryDir = cluster.primaryDir, standbyDir = cluster.standbyDir
        #expect(try await Self.waitUntil(10) { daemon.log.contains("none of them synchronous") }, "the start warns: \(daemon.log.suffix(1_000))")
        for _ in 0..<3 { #expect(try await daemon.request("POST", "/v1/sessions").0 == 201) }
        let signedPath = try #require(try await Self.waitUntil(10) { Self.signedHeadPath(in: directory.path) != nil } ? Self.signedHeadPath(in: directory.path) : nil)
        // Every row so far signed before the cut (the head unchanged over two checkpoint
        // intervals, nothing else writing): so that a head signed after the cut covers rows the
        // standby never received. (Read at once, the head could move on once more for rows
        // written before the cut, which the standby has: then it extends what was signed, and
        // photosd rightly signs on — seen once in CI.)
        var settled = try String(contentsOfFile: signedPath, encoding: .utf8)
        for _ in 0..<20 {
            try await Task.sleep(for: .milliseconds(2_500))
            let now = try String(contentsOfFile: signedPath, encoding: .utf8)
            if now == settled { break }
            settled = now
        }

        // The link cut: the standby stops receiving; the primary goes on, and the key signs more.
        _ = try await Self.server(["pause", standbyDir])
        let cut = try String(contentsOfFile: signedPath, encoding: .utf8)
        #expect(cut == settled, "the head moved on between the settling and the cut")
        for _ in 0..<8 { #expect(try await daemon.request("POST", "/v1/sessions").0 == 201) }
        #expect(try await Self.waitUntil(30) { (try? String(contentsOfFile: signedPath, encoding: .utf8)) != cut })

        // The primary lost; the standby, behind, promoted. What the key signed is read once the
        // primary is gone (a checkpoint committed just before writes its head just after).
        _ = try await Self.server(["kill", primaryDir])
        try await Task.sleep(for: .seconds(1))
        let signed = try String(contentsOfFile: signedPath, encoding: .utf8)
        _ = try await Self.server(["resume", standbyDir])
        _ = try await Self.server(["promote", standbyDir])
        #expect(try await Self.waitUntil(60) {
            (try? await daemon.request("POST", "/v1/sessions").0) == 201 && daemon.log.contains("following the writable PostgreSQL host")
        }, "photosd follows the promoted standby: \(daemon.log.suffix(2_000))")
        // It refuses to sign the shorter, different history, and says so.
        #expect(try await Self.waitUntil(30) {
            let (status, body) = try await daemon.request("GET", "/readyz")
            return status == 503 && body["check"] as? String == "log"
        })
        #expect(daemon.log.contains("refusing to sign the audit log"))
        for _ in 0..<3 { _ = try await daemon.request("POST", "/v1/sessions") }
        try await Task.sleep(for: .seconds(2))
        #expect(try String(contentsOfFile: signedPath, encoding: .utf8) == signed, "nothing signed after the failover")
        // Whatever it serves now is a note from before (the standby's newest), consistent with the ones before the cut.
        if let note = try? await URLSession.shared.data(from: URL(string: daemon.baseURL + "/v1/log/checkpoint")!).0 {
            let text = String(decoding: note, as: UTF8.self)
            let size = try LogCheckpoint(parsing: SignedNote(parsing: text).text).size
            #expect(size < Int64(signed.split(separator: " ")[0]) ?? 0, "the note served is the standby's older one")
        }
    }

    /// The `*.signed` file photosd keeps beside its key (under `directory`).
    static func signedHeadPath(in directory: String) -> String? {
        guard let files = FileManager.default.enumerator(atPath: directory) else { return nil }
        for case let file as String in files where file.hasSuffix("audit-signing.key.signed") { return directory + "/" + file }
        return nil
    }

    /// Each note extends every earlier one: a consistency proof from photosd, checked here.
    static func expectConsistent(_ notes: [String], daemon: Daemon) async throws {
        // Each note against the one before it (consistency is transitive: a chain of verified
        // proofs makes every note extend every earlier one) and against the first. Every pair
        // was quadratic: a run slowed by the full suite collects a note a second, and hundreds
        // of notes took minutes of proofs.
        let trees = try notes.map { try LogCheckpoint(parsing: SignedNote(parsing: $0).text) }
        for (index, new) in trees.enumerated() where index > 0 {
            var earlier = [trees[index - 1]]
            if index > 1 { earlier.append(trees[0]) }
            for old in earlier {
                #expect(old.size <= new.size, "a note of a smaller tree (\(new.size)) after a larger one (\(old.size))")
                guard old.size > 0, old.size <= new.size else { continue }
                let (data, _) = try await URLSession.shared.data(from: URL(string: daemon.baseURL + "/v1/log/consistency?from=\(old.size)&to=\(new.size)")!)
                let proof = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
                let hashes = (proof["hashes"] as? [String] ?? []).compactMap { Data(base64Encoded: $0).flatMap(MerkleTree.Hash.init) }
                #expect(
                    old.size == new.size ? old.root == new.root : MerkleTree.verifyConsistency(old: old.size, new: new.size, oldRoot: old.root, newRoot: new.root, proof: hashes),
                    "\(old.size) → \(new.size)")
            }
        }
    }
}
