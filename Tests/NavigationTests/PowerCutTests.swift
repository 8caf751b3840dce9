import AuditTrail
import DatabaseAccess
import Foundation
import Navigation
import PhotosCore
import PhotosModel
import PhotosStorage
import PhotosTestSupport
import Sessions
import SQLiteStore
import Synchronization
import Testing

/// Power cuts under load, the SQLite way: the real group-commit writer and session coordinator
/// over the fault-injecting VFS, concurrent clients applying real actions, the power cut inside
/// a random write or sync (unsynced writes dropped or torn), then a "reboot": the files opened
/// again with the system's VFS and checked.
///
/// `PHOTOSD_POWER_CUTS` (default 12) cuts per durability setting, `PHOTOSD_RANDOM_SEED` seeds
/// them; `scripts/power-test` runs 200 of each.
@Suite("Power cuts under load", .serialized)
struct PowerCutTests {
    static let seed: UInt64 = ProcessInfo.processInfo.environment["PHOTOSD_RANDOM_SEED"].flatMap { UInt64($0) } ?? 20_261_122
    static let cuts = ProcessInfo.processInfo.environment["PHOTOSD_POWER_CUTS"].flatMap { Int($0) } ?? 12
    static let clients = 6
    static let password = "correct horse"

    /// What one cut did.
    struct Report {
        var acknowledged = 0
        var lost = 0
        /// From the oldest lost acknowledgement to the cut, in milliseconds (0 when none was lost).
        var lostWindowMilliseconds = 0.0
        var sessions = 0
        var writesUndone = 0
        var mode = FaultVFS.CutMode.drop
    }

    /// An acknowledged action (or session creation): the state it left its session in.
    struct Acknowledgement {
        var session: String
        var version: Int
        var seq: Int
        var at: ContinuousClock.Instant
    }

    /// Every acknowledgement the clients received.
    final class Acknowledgements: Sendable {
        private let state = Mutex<[Acknowledgement]>([])
        func record(_ ack: Acknowledgement) { state.withLock { $0.append(ack) } }
        var all: [Acknowledgement] { state.withLock { $0 } }
    }

    @Test("durability full: every acknowledged action survives a power cut; the database verifies and every session goes on")
    func full() async throws {
        let reports = try await Self.run(.full)
        #expect(reports.allSatisfy { $0.lost == 0 }, "acknowledged actions lost under durability full")
        #expect(reports.reduce(0) { $0 + $1.acknowledged } > Self.cuts * 5, "too little load to mean anything")
        #expect(reports.contains { $0.writesUndone > 0 }, "no cut undid anything")
    }

    @Test("durability normal: a power cut leaves a consistent database that verifies; the acknowledged actions lost are counted")
    func normal() async throws {
        let reports = try await Self.run(.normal)
        #expect(reports.reduce(0) { $0 + $1.acknowledged } > Self.cuts * 5, "too little load to mean anything")
    }

    /// Runs `cuts` seeded cuts and prints their totals.
    static func run(_ durability: Connection.Synchronous) async throws -> [Report] {
        var reports: [Report] = []
        for number in 0..<cuts {
            let cutSeed = seed &+ UInt64(number) &* 1_000_003 &+ (durability == .full ? 0 : 7)
            reports.append(try await cut(durability: durability, seed: cutSeed))
        }
        let acknowledged = reports.reduce(0) { $0 + $1.acknowledged }
        let lost = reports.reduce(0) { $0 + $1.lost }
        let window = reports.map(\.lostWindowMilliseconds).max() ?? 0
        let torn = reports.filter { $0.mode == .tear }.count
        print(
            "power cuts (\(durability.rawValue), seed \(seed)): \(reports.count) cuts (\(torn) torn, \(reports.count - torn) dropped), "
                + "\(reports.reduce(0) { $0 + $1.sessions }) sessions, \(acknowledged) acknowledged actions, \(lost) lost "
                + "(most in one cut: \(reports.map(\.lost).max() ?? 0), oldest lost acknowledgement \(String(format: "%.0f", window)) ms before the cut), "
                + "\(reports.reduce(0) { $0 + $1.writesUndone }) unsynced writes undone")
        return reports
    }

    /// One cut: set up, load, cut, reboot, check.
    static func cut(durability: Connection.Synchronous, seed: UInt64) async throws -> Report {
        var random = SeededGenerator(state: seed)
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("photos.db")
        let keyPath = directory.file("audit-signing.key")
        // The machine boots with a database that is on disk (closed cleanly: synced).
        do {
            let database = try PhotosDatabase.open(path: path, durability: durability, readerCount: 1)
            let auth = AuthService(database: database, bcryptCost: 4, tokenLifetimeSeconds: 3_600)
            _ = try await CatalogService(database: database).importPhotos(
                [NewPhoto(title: "Sunset", priceCents: 250), NewPhoto(title: "Harbour", priceCents: 100), NewPhoto(title: "Snow", priceCents: 300)],
                actor: testOperator)
            _ = try await auth.createUser(username: "alice", password: password, actor: testOperator)
            await database.close()
        }
        let secret = try ServerSecret.loadOrCreate(path: directory.file("photosd-secret.key"))

        var report = Report()
        report.mode = Bool.random(using: &random) ? .tear : .drop
        let vfs = try FaultVFS()
        let database = try PhotosDatabase.open(path: path, durability: durability, readerCount: 2, vfs: vfs.name)
        let auth = AuthService(database: database, bcryptCost: 4, tokenLifetimeSeconds: 3_600)
        let coordinator = SessionCoordinator(database: database, auth: auth, idempotency: IdempotencyStore(secret: secret, retentionSeconds: 86_400))
        let audit = AuditService(database: database, signingKeyPath: keyPath)
        let powerSeed = random.next()
        // Under `normal` only a WAL checkpoint (every 1,000 pages) syncs: cuts reach further in,
        // so that some land after one and the measured window is the real one.
        let reach = durability == .full ? 800 : 8_000
        vfs.powerCut(afterOperations: Int.random(in: 5...reach, using: &random), mode: report.mode, seed: powerSeed)

        let acknowledged = Acknowledgements()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for client in 0..<clients {
                var clientRandom = SeededGenerator(state: seed &+ UInt64(client) &+ 1)
                group.addTask {
                    await load(coordinator, random: &clientRandom, vfs: vfs, acknowledged: acknowledged)
                }
            }
            // The checkpoint writer runs beside the clients, as in photosd.
            group.addTask {
                while !vfs.isOff {
                    _ = try? await audit.checkpoint()
                    try await Task.sleep(for: .milliseconds(5))
                }
            }
            try await group.waitForAll()
        }
        if !vfs.isOff { vfs.powerCut(report.mode, seed: powerSeed) }
        let cutInstant = ContinuousClock.now
        report.writesUndone = vfs.statistics.writesLost
        await database.close()
        vfs.unregister()

        // Reboot: the system's VFS, recovery from whatever the WAL holds.
        let rebooted = try PhotosDatabase.open(path: path, durability: durability, readerCount: 1)
        defer { rebooted.close() }
        let (integrity, verification, trails) = try await rebooted.read { connection in
            let integrity = try await connection.queryOne("PRAGMA integrity_check")?.string(0)
            let verification = try await AuditChains.verify(on: connection, publicKey: try AuditService.trustedKey(explicit: nil, signingKeyPath: keyPath))
            let trails = try await connection.query(
                "SELECT s.id, s.version, count(a.seq), coalesce(max(a.seq), 0) FROM sessions s LEFT JOIN audit_trail a ON a.session_id = s.id GROUP BY s.id"
            ).map { (id: try $0.string(0), version: try $0.int(1), rows: try $0.int(2), last: try $0.int(3)) }
            return (integrity, verification, trails)
        }
        #expect(integrity == "ok", "seed \(seed)")
        #expect(verification.isIntact, "seed \(seed): \(String(describing: verification.problem))")
        for trail in trails {
            #expect(trail.rows == trail.last, "seed \(seed): session \(trail.id) has gaps in seq")
        }
        let found = Dictionary(uniqueKeysWithValues: trails.map { ($0.id, $0) })
        for ack in acknowledged.all {
            report.acknowledged += 1
            if let trail = found[ack.session], trail.version >= ack.version, trail.last >= ack.seq { continue }
            report.lost += 1
            let window = (cutInstant - ack.at)
            report.lostWindowMilliseconds = max(report.lostWindowMilliseconds, Double(window.components.seconds) * 1_000 + Double(window.components.attoseconds) / 1e15)
        }
        report.sessions = trails.count

        // Every session that survived loads and takes its next action, on the rebooted database.
        let rebootedAuth = AuthService(database: rebooted, bcryptCost: 4, tokenLifetimeSeconds: 3_600)
        let rebootedCoordinator = SessionCoordinator(database: rebooted, auth: rebootedAuth, idempotency: IdempotencyStore(secret: secret, retentionSeconds: 86_400))
        for trail in trails {
            let view = try await rebootedCoordinator.session(id: trail.id)
            let name = view.top?.actions.first ?? .back
            let result = try await rebootedCoordinator.apply(action(name, photoId: 1), to: trail.id, expectVersion: view.version)
            #expect(result.error == nil, "seed \(seed): session \(trail.id) refused \(name) after the reboot")
            #expect(result.session.version == view.version + 1)
        }
        return report
    }

    /// One client: sessions of random actions until the power goes (or enough were done).
    static func load(_ coordinator: SessionCoordinator, random: inout SeededGenerator, vfs: FaultVFS, acknowledged: Acknowledgements) async {
        func acknowledge(_ result: ActionResult) {
            acknowledged.record(Acknowledgement(
                session: result.session.id, version: result.session.version, seq: result.events.map(\.seq).max() ?? 0, at: ContinuousClock.now))
        }
        var actions = 0
        while !vfs.isOff, actions < 1_000 {
            do {
                let created = try await coordinator.createSession()
                acknowledge(created)
                var view = created.session
                for _ in 0..<Int.random(in: 1...12, using: &random) {
                    let available = view.top?.actions ?? []
                    guard !available.isEmpty else { break }
                    let name = available[Int.random(in: 0..<available.count, using: &random)]
                    let result = try await coordinator.apply(action(name, photoId: Int64.random(in: 1...3, using: &random)), to: view.id)
                    acknowledge(result)
                    view = result.session
                    actions += 1
                }
            } catch {
                // The power is gone (or the storage failed): nothing after this is acknowledged.
                return
            }
        }
    }

    static func action(_ name: ActionName, photoId: Int64) -> ClientAction {
        name == .submit ? ClientAction(.submit, username: "alice", password: password) : ClientAction(name, photoId: photoId)
    }
}
