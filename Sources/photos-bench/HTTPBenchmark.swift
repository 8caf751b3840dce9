import ArgumentParser
import DatabaseAccess
import Foundation
import Histogram
import PhotosCore
import PhotosModel
import PhotosStorage
import SQLiteStore

/// The figures of one HTTP run.
struct HTTPRunResult: Codable {
    var virtualUsers: Int
    var durationSeconds: Double
    var actions: Int
    var actionsPerSecond: Double
    var errors: Int
    var p50Ms: Double
    var p90Ms: Double
    var p99Ms: Double
    var p999Ms: Double
    var maxMs: Double
    var healthzPerSecond: Double
    var healthzP99Ms: Double
    var ratio: Double
    var peakRSSMegabytes: Double?
    /// photosd's CPU time per action and per healthz request (when it runs here).
    var serverCPUMicrosPerAction: Double?
    var serverCPUMicrosPerHealthz: Double?
    /// CPU time of photosd's writer thread per action: the part that runs one at a time (SQLite).
    var writerCPUMicrosPerAction: Double?
    /// CPU time of the database server's processes per action (PostgreSQL on this machine).
    var databaseCPUMicrosPerAction: Double?
    /// CPU time of this load generator per action and per healthz request (it shares the cores).
    var clientCPUMicrosPerAction: Double?
    var clientCPUMicrosPerHealthz: Double?
    var durability: String
    /// `sqlite` or `postgres`.
    var store: String = "sqlite"
    /// How many photosd instances served the run (PostgreSQL: several may).
    var instances: Int = 1
}

/// Virtual users walking realistic journeys through the API, each with its own connection,
/// session and user; one thread drives them all (`EventLoopLoad`).
enum HTTPBenchmark {
    static let password = "bench-password"

    /// What the virtual users walk.
    enum Journeys: String, CaseIterable, ExpressibleByArgument {
        /// Every user the stack journey (the figures before tabs existed are comparable).
        case stack
        /// Every user the tabs journey (tab switches and deep links).
        case tabs
        /// Every fourth user the tabs journey, the others the stack journey.
        case mixed
        /// Every user creates sessions, one per request (`POST /v1/sessions`, counted as an
        /// action): what a database's growth costs new visitors.
        case create

        func walksTabs(_ index: Int) -> Bool {
            switch self {
            case .stack, .create: false
            case .tabs: true
            case .mixed: index % 4 == 3
            }
        }
    }

    /// Creates `users` users (`bench-0`…) and `photos` photos in the database `configuration`
    /// names (a fresh SQLite file or PostgreSQL database).
    /// Returns, on PostgreSQL, the pid of the backend that served the seeding (its parent is
    /// the server's postmaster, whose processes the run's database CPU counts).
    @discardableResult
    static func seed(_ configuration: PhotosConfiguration, users: Int, photos: Int, experiments: [Experiment] = []) async throws -> Int32? {
        var configuration = configuration
        configuration.durability = .normal
        let database = try await PhotosDatabase.open(configuration)
        do {
            try await seed(database, users: users, photos: photos)
            for experiment in experiments {
                _ = try await ExperimentService(database: database).add(name: experiment.name, point: experiment.point, variants: experiment.variants, actor: .system)
            }
            var postmaster: Int32?
            if database.writersRunConcurrently {
                let backend = try await database.read { try await $0.queryOne("SELECT pg_backend_pid() AS pid")?.int("pid") }
                postmaster = backend.flatMap { ProcessCPU.parent(of: Int32($0)) }
            }
            await database.close()
            return postmaster
        } catch {
            await database.close()
            throw error
        }
    }

    private static func seed(_ database: any DatabaseStore, users: Int, photos: Int) async throws {
        let catalog = CatalogService(database: database)
        if try await catalog.list(limit: 1).isEmpty {
            _ = try await catalog.importPhotos((1...photos).map { NewPhoto(title: "Bench photo \($0)", priceCents: 100 + $0) }, actor: .system)
        }
        // Cost 4: sign-in happens once per virtual user, before measuring; bcrypt is not what
        // this benchmark measures.
        let auth = AuthService(database: database, bcryptCost: 4)
        for index in 0..<users where try await auth.user(named: "bench-\(index)") == nil {
            _ = try await auth.createUser(username: "bench-\(index)", password: password, actor: .system)
        }
    }

    /// One virtual user: a session, signed in, then the journey in a loop (or `GET /healthz`
    /// in a loop), one request at a time, driven by `EventLoopLoad`.
    final class VirtualUser: EventLoopLoad.User {
        /// What the user sends in the phase under way.
        enum Mode { case journey, healthz }

        let connection: HTTPConnection
        let index: Int
        let port: Int
        /// True for the tabs journey, false for the stack journey.
        let tabs: Bool
        let host: String
        let photos: Int
        var session = ""
        /// `Authorization: Session <secret>` and its line end, for the session's requests.
        var authorization = ""
        var mode = Mode.journey
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        var actions = 0
        var errors = 0
        var random: UInt64
        /// Where the user is in the journey, and its photos for this loop of it.
        private var step = 0
        private var photo = 1
        private var other = 1
        private var lastBody = ""

        /// True when the user's journey is creating sessions.
        var creates = false

        init(index: Int, host: String, port: Int, photos: Int, tabs: Bool) throws {
            self.index = index
            self.tabs = tabs
            self.host = host
            self.port = port
            self.photos = photos
            self.connection = try HTTPConnection(host: host, port: port)
            self.random = UInt64(index) &* 0x9E37_79B9_7F4A_7C15 | 1
        }

        func nextPhoto() -> Int {
            random ^= random << 13; random ^= random >> 7; random ^= random << 17
            return Int(random % UInt64(photos)) + 1
        }

        /// Creates the session and signs it in (not measured), over a blocking connection.
        func prepare() throws {
            let created = try connection.request("POST", "/v1/sessions", body: tabs ? #"{"layout":"tabs"}"# : nil)
            let object = try? JSONSerialization.jsonObject(with: Data(created.body)) as? [String: Any]
            guard created.status == 201, let id = object?["id"] as? String, let secret = object?["sessionSecret"] as? String else {
                throw BenchError("POST /v1/sessions: \(created.status) \(created.text.prefix(200))")
            }
            session = id
            authorization = "Authorization: Session \(secret)\r\n"
            for body in [#"{"action":"signIn"}"#, #"{"action":"submit","username":"bench-\#(index)","password":"\#(HTTPBenchmark.password)"}"#] {
                let response = try connection.request("POST", "/v1/sessions/\(session)/actions", body: body, headers: authorization)
                guard response.status == 200 else { throw BenchError("signing in bench-\(index): \(response.status) \(response.text.prefix(200))") }
            }
            // The measured phases open their own connections: the server holds one per user.
            connection.close()
        }

        /// The journey, one action per call. Only valid actions.
        func nextActionBody() -> String {
            if step == 0 {
                photo = nextPhoto()
                other = nextPhoto()
            }
            return tabs ? nextTabsActionBody() : nextStackActionBody()
        }

        /// Stack journey: browse, select, back, buy (horizontal) with terms, cancel, then a
        /// vertical buy with terms and a purchase.
        func nextStackActionBody() -> String {
            defer { step = (step + 1) % 12 }
            switch step {
            case 0, 2: return #"{"action":"selectPhoto","photoId":\#(photo)}"#
            case 1, 7: return #"{"action":"back"}"#
            case 3, 11: return #"{"action":"buy"}"#
            case 4, 9: return #"{"action":"showTerms"}"#
            case 5, 6: return #"{"action":"cancel"}"#
            case 8: return #"{"action":"buyPhoto","photoId":\#(other)}"#
            default: return #"{"action":"dismiss"}"#
            }
        }

        /// Tabs journey: a purchase flow left open across tab switches, terms, the purchase,
        /// a deep link into another purchase, a reselect that pops it, a link to the purchases
        /// tab. Starts and ends on the photos tab's root.
        func nextTabsActionBody() -> String {
            defer { step = (step + 1) % 13 }
            switch step {
            case 0: return #"{"action":"selectPhoto","photoId":\#(photo)}"#
            case 1, 6: return #"{"action":"buy"}"#
            case 2, 7: return #"{"action":"selectTab","tab":"purchases"}"#
            case 3, 10, 12: return #"{"action":"selectTab","tab":"photos"}"#
            case 4: return #"{"action":"showTerms"}"#
            case 5, 9: return #"{"action":"cancel"}"#
            case 8: return #"{"action":"openLink","link":"/photos/\#(other)/buy"}"#
            default: return #"{"action":"openLink","link":"/purchases"}"#
            }
        }

        func nextRequest() -> [UInt8] {
            switch mode {
            case .healthz:
                return HTTPConnection.requestBytes("GET", "/healthz", host: host)
            case .journey where creates:
                lastBody = "{}"
                return HTTPConnection.requestBytes("POST", "/v1/sessions", host: host, body: lastBody)
            case .journey:
                lastBody = nextActionBody()
                return HTTPConnection.requestBytes("POST", "/v1/sessions/\(session)/actions", host: host, body: lastBody, headers: authorization)
            }
        }

        func received(status: Int, nanoseconds: UInt64) {
            guard status == (mode == .journey && creates ? 201 : 200) else {
                errors += 1
                if errors <= 3 && index == 0 {
                    FileHandle.standardError.write(Data("virtual user 0: \(status) for \(lastBody.prefix(80))\n".utf8))
                }
                return
            }
            _ = histogram.record(nanoseconds / 1_000)  // microseconds
            actions += 1
        }

        func failed() {
            errors += 1
        }
    }

    /// Runs every user in `mode` for `seconds` on one event loop; returns the elapsed time.
    static func runPhase(_ users: [VirtualUser], host: String, seconds: Double, mode: VirtualUser.Mode) throws -> Double {
        for user in users { user.mode = mode }
        return try EventLoopLoad(host: host).run(users, seconds: seconds)
    }

    static func reset(_ users: [VirtualUser]) {
        for user in users {
            user.histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
            user.actions = 0
            user.errors = 0
        }
    }

    static func merged(_ users: [VirtualUser]) -> (Histogram<UInt64>, Int, Int) {
        var histogram = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
        var count = 0, errors = 0
        for user in users {
            histogram.add(user.histogram)
            count += user.actions
            errors += user.errors
        }
        return (histogram, count, errors)
    }

    /// One run at `virtualUsers`: warm-up, actions for `seconds`, then healthz for `seconds`.
    /// User `i` talks to `ports[i % ports.count]` (several instances share the users).
    static func run(
        host: String, ports: [Int], virtualUsers: Int, seconds: Double, photos: Int, journeys: Journeys,
        peakRSS: () -> Int?, serverCPU: () -> Double?, writerCPU: () -> Double?, databaseCPU: () -> Double? = { nil },
        durability: String
    ) throws -> HTTPRunResult {
        var users: [VirtualUser] = []
        for index in 0..<virtualUsers {
            let port = ports[index % ports.count]
            let user = try VirtualUser(index: index, host: host, port: port, photos: photos, tabs: journeys.walksTabs(index))
            user.creates = journeys == .create
            try user.prepare()
            users.append(user)
        }
        // Warm-up: caches, connections, the first purchases.
        _ = try runPhase(users, host: host, seconds: min(2, seconds / 4), mode: .journey)
        reset(users)
        let cpuBeforeActions = serverCPU()
        let writerBeforeActions = writerCPU()
        let databaseBeforeActions = databaseCPU()
        let clientBeforeActions = ProcessCPU.seconds(pid: getpid())
        let actionSeconds = try runPhase(users, host: host, seconds: seconds, mode: .journey)
        let cpuAfterActions = serverCPU()
        let writerAfterActions = writerCPU()
        let databaseAfterActions = databaseCPU()
        let clientAfterActions = ProcessCPU.seconds(pid: getpid())
        let (actionHistogram, actionCount, actionErrors) = merged(users)
        let rss = peakRSS()
        reset(users)
        let healthSeconds = try runPhase(users, host: host, seconds: seconds, mode: .healthz)
        let cpuAfterHealth = serverCPU()
        let clientAfterHealth = ProcessCPU.seconds(pid: getpid())
        let (healthHistogram, healthCount, healthErrors) = merged(users)
        func perRequest(_ from: Double?, _ to: Double?, _ count: Int) -> Double? {
            guard let from, let to, count > 0 else { return nil }
            return (to - from) / Double(count) * 1_000_000
        }
        func ms(_ histogram: Histogram<UInt64>, _ percentile: Double) -> Double { Double(histogram.valueAtPercentile(percentile)) / 1_000 }
        let actionsPerSecond = Double(actionCount) / actionSeconds
        let healthPerSecond = Double(healthCount) / healthSeconds
        return HTTPRunResult(
            virtualUsers: virtualUsers, durationSeconds: actionSeconds, actions: actionCount,
            actionsPerSecond: actionsPerSecond, errors: actionErrors + healthErrors,
            p50Ms: ms(actionHistogram, 50), p90Ms: ms(actionHistogram, 90), p99Ms: ms(actionHistogram, 99),
            p999Ms: ms(actionHistogram, 99.9), maxMs: Double(actionHistogram.max) / 1_000,
            healthzPerSecond: healthPerSecond, healthzP99Ms: ms(healthHistogram, 99),
            ratio: healthPerSecond > 0 ? actionsPerSecond / healthPerSecond : 0,
            peakRSSMegabytes: rss.map { Double($0) / 1_048_576 },
            serverCPUMicrosPerAction: perRequest(cpuBeforeActions, cpuAfterActions, actionCount),
            serverCPUMicrosPerHealthz: perRequest(cpuAfterActions, cpuAfterHealth, healthCount),
            writerCPUMicrosPerAction: perRequest(writerBeforeActions, writerAfterActions, actionCount),
            databaseCPUMicrosPerAction: perRequest(databaseBeforeActions, databaseAfterActions, actionCount),
            clientCPUMicrosPerAction: perRequest(clientBeforeActions, clientAfterActions, actionCount),
            clientCPUMicrosPerHealthz: perRequest(clientAfterActions, clientAfterHealth, healthCount),
            durability: durability)
    }
}
