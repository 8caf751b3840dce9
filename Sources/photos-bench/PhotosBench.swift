import ArgumentParser
import DatabaseAccess
import Foundation
import PhotosCore
import PhotosdProcess
import PhotosModel
import PostgresStore
import SQLiteStore

/// `photos-bench`: throughput and latency of photosd, measured on this machine.
@main
struct PhotosBench: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "photos-bench",
        abstract: "Measure photosd: audited actions/s and latency over HTTP against the healthz ceiling, or the storage writer alone.",
        subcommands: [HTTP.self, Storage.self, AuditTrail.self, LogProofs.self, Core.self, Receipts.self],
        defaultSubcommand: HTTP.self)
}

/// Where JSON results go.
struct ResultOptions: ParsableArguments {
    @Option(help: "Also write the figures as JSON to this file.") var json: String?

    func write<T: Encodable>(_ value: T) throws {
        guard let json else { return }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        try encoder.encode(value).write(to: URL(fileURLWithPath: json))
        print("wrote \(json)")
    }
}

func format(_ value: Double, _ digits: Int = 1) -> String { String(format: "%.\(digits)f", value) }

extension PhotosBench {
    struct HTTP: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Virtual users walk journeys through the API; the same client then measures GET /healthz.")

        @Option(help: "Comma-separated numbers of virtual users; one run each.") var vus = "64"
        @Option(help: "Seconds per phase (actions, then healthz).") var duration = 10.0
        @Option(help: "Photos in the catalogue.") var photos = 100
        @Option(help: "Journeys: stack, tabs (tab switches and deep links), or mixed (every fourth user tabs).") var journeys = HTTPBenchmark.Journeys.mixed
        @Option(help: "Durability of the daemon started here: full or normal.") var durability = "full"
        @Option(help: "log.level of the daemon started here: notice writes no request line, info (photosd's default) one per request.")
        var logLevel = "notice"
        @Option(help: "Target a running photosd instead (users bench-0… must exist: see `photos-bench http --help`).") var url: String?
        @Option(help: "With --url: the server's process id, for its CPU time per request (e.g. the raw peer's).") var serverPid: Int32?
        @Option(help: "The photosd binary to start (default: next to photos-bench).") var photosd: String?
        @Option(help: "Directory for the temporary database (default: a new one under .build-bench/).") var directory: String?
        @Option(help: "Run on PostgreSQL: a postgres:// URL of a server (the user needs CREATEDB); each run creates a database photos_bench_… there and drops it after. Default: a SQLite file.")
        var db: String?
        @Option(help: "photosd instances on the one database (PostgreSQL only); the virtual users are spread over them.") var instances = 1
        @Option(help: "Run with a flow experiment: POINT=VARIANTS, e.g. buy.presentation=push:50,modal:50 (repeatable). The stack journey is valid under every variant; the tabs journey not under buy.presentation (a sheet hides the tab bar).")
        var experiment: [String] = []
        @OptionGroup var output: ResultOptions

        /// The `--experiment` options, parsed.
        var experiments: [Experiment] {
            get throws {
                try experiment.map { text in
                    let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
                    guard parts.count == 2, let point = VariationPoint(rawValue: parts[0]) else {
                        throw ValidationError("--experiment takes POINT=VARIANTS, e.g. buy.presentation=push:50,modal:50")
                    }
                    do {
                        return Experiment(name: "bench-\(point.rawValue)", point: point, variants: try Experiment.parseVariants(parts[1], for: point))
                    } catch let error as PhotosError { throw ValidationError(error.message) }
                }
            }
        }

        func validate() throws {
            guard (1...16).contains(instances) else { throw ValidationError("--instances must be between 1 and 16") }
            if let db, !PostgresLocation.isURL(db) { throw ValidationError("--db takes a postgres:// URL (SQLite runs need no option)") }
            if instances > 1, db == nil { throw ValidationError("--instances above 1 needs --db postgres://…: a SQLite file is served by one process") }
            if url != nil, db != nil || instances > 1 { throw ValidationError("--url targets a running photosd; --db and --instances start their own") }
            if url == nil, serverPid != nil { throw ValidationError("--server-pid goes with --url (a photosd started here is measured anyway)") }
            if url != nil, !experiment.isEmpty { throw ValidationError("--experiment needs the photosd started here (add it with photos-admin experiments add for --url)") }
            if try experiments.contains(where: { $0.point == .buyPresentation }), journeys == .tabs || journeys == .mixed {
                throw ValidationError("--experiment buy.presentation=… needs --journeys stack: the tabs journey switches tabs where a sheet would be shown")
            }
        }

        func run() async throws {
            let counts = vus.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !counts.isEmpty, counts.allSatisfy({ (1...2_000).contains($0) }) else { throw ValidationError("--vus must list numbers between 1 and 2000") }
            var results: [HTTPRunResult] = []
            print("vus  actions/s   p50 ms  p90 ms  p99 ms  p99.9 ms  errors  healthz/s  ratio  peak RSS MB  server CPU µs/action  µs/healthz  writer µs/action  db µs/action  client µs/action  µs/healthz")
            for count in counts {
                let result = try await runOnce(virtualUsers: count, maxUsers: counts.max() ?? count)
                results.append(result)
                print(Self.row(result))
            }
            try output.write(results)
        }

        static func row(_ result: HTTPRunResult) -> String {
            func cell(_ text: String, _ width: Int) -> String { text.padding(toLength: width, withPad: " ", startingAt: 0) }
            var cells: [String] = []
            cells.append(cell(String(result.virtualUsers), 4))
            cells.append(cell(format(result.actionsPerSecond, 0), 11))
            cells.append(cell(format(result.p50Ms, 2), 7))
            cells.append(cell(format(result.p90Ms, 2), 7))
            cells.append(cell(format(result.p99Ms, 2), 7))
            cells.append(cell(format(result.p999Ms, 2), 9))
            cells.append(cell(String(result.errors), 7))
            cells.append(cell(format(result.healthzPerSecond, 0), 10))
            cells.append(cell(format(result.ratio, 3), 6))
            cells.append(cell(result.peakRSSMegabytes.map { format($0) } ?? "-", 12))
            cells.append(cell(result.serverCPUMicrosPerAction.map { format($0, 0) } ?? "-", 21))
            cells.append(cell(result.serverCPUMicrosPerHealthz.map { format($0, 0) } ?? "-", 11))
            cells.append(cell(result.writerCPUMicrosPerAction.map { format($0, 0) } ?? "-", 17))
            cells.append(cell(result.databaseCPUMicrosPerAction.map { format($0, 0) } ?? "-", 13))
            cells.append(cell(result.clientCPUMicrosPerAction.map { format($0, 0) } ?? "-", 17))
            cells.append(result.clientCPUMicrosPerHealthz.map { format($0, 0) } ?? "-")
            return cells.joined(separator: " ")
        }

        func runOnce(virtualUsers: Int, maxUsers: Int) async throws -> HTTPRunResult {
            if let url {
                guard let parsed = URL(string: url), let host = parsed.host, let port = parsed.port else {
                    throw ValidationError("--url must look like http://127.0.0.1:8080")
                }
                return try HTTPBenchmark.run(
                    host: host, ports: [port], virtualUsers: virtualUsers, seconds: duration, photos: photos, journeys: journeys,
                    peakRSS: { nil }, serverCPU: { serverPid.map { ProcessCPU.seconds(pid: $0) } }, writerCPU: { nil }, durability: "unknown")
            }
            let base = directory ?? FileManager.default.currentDirectoryPath + "/.build-bench"
            let runDirectory = base + "/http-\(virtualUsers)-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: runDirectory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: runDirectory) }
            let postgres = if let db { try await BenchDatabase.create(serverURL: db) } else { BenchDatabase?.none }
            do {
                let result = try await runOnce(virtualUsers: virtualUsers, database: postgres?.url ?? runDirectory + "/photos.db", in: runDirectory)
                await postgres?.drop()
                return result
            } catch {
                await postgres?.drop()
                throw error
            }
        }

        /// Seeds `database`, starts `instances` photosd on it and runs the load against them.
        func runOnce(virtualUsers: Int, database: String, in runDirectory: String) async throws -> HTTPRunResult {
            var configuration = PhotosConfiguration()
            configuration.databasePath = database
            configuration.secretKeyPath = runDirectory + "/photosd-secret.key"
            // A key of the caller's (scripts/bench-witnesses: witnesses trust its note key) or one per run.
            configuration.auditSigningKeyPath = ProcessInfo.processInfo.environment["PHOTOSD_AUDIT_SIGNING_KEY_PATH"] ?? runDirectory + "/audit-signing.key"
            let postmaster = try await HTTPBenchmark.seed(configuration, users: virtualUsers, photos: photos, experiments: try experiments)
            // Instances share the server secret and the signing key, as a deployment's must.
            var daemons: [PhotosdProcess] = []
            defer { for daemon in daemons { daemon.stop() } }
            for _ in 0..<instances {
                daemons.append(try PhotosdProcess(
                    binary: photosd ?? PhotosdProcess.besideBenchmark, arguments: ["--db", database],
                    // Quiet, but it still says where it listens. Every virtual user comes from
                    // 127.0.0.1: the per-address session limit (120 a minute) would count them as
                    // one client and refuse the 121st user's session, or `--journeys create`.
                    environment: [
                        "PHOTOSD_DATABASE_DURABILITY": durability, "PHOTOSD_LOG_LEVEL": logLevel,
                        "PHOTOSD_LIMITS_SESSIONS_PER_MINUTE_PER_ADDRESS": "0",
                        "PHOTOSD_AUTH_SECRET_KEY_PATH": configuration.secretKeyPath,
                        "PHOTOSD_AUDIT_SIGNING_KEY_PATH": configuration.auditSigningKeyPath,
                    ]))
            }
            let onPostgres = db != nil
            var result = try HTTPBenchmark.run(
                host: "127.0.0.1", ports: daemons.map(\.port), virtualUsers: virtualUsers, seconds: duration, photos: photos, journeys: journeys,
                peakRSS: { daemons.map(\.peakResidentBytes).max() },
                serverCPU: { daemons.reduce(0) { $0 + $1.cpuSeconds } },
                writerCPU: { onPostgres ? nil : daemons.first?.writerCPUSeconds },
                databaseCPU: { postmaster.flatMap { ProcessCPU.seconds(postgresServer: $0) } },
                durability: durability)
            result.store = onPostgres ? "postgres" : "sqlite"
            result.instances = instances
            for daemon in daemons {
                let status = daemon.stop()
                if status != 0 { print("warning: photosd exited with \(status)") }
            }
            daemons.removeAll()
            return result
        }
    }

    struct Storage: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "The storage writer alone: group commit against one transaction per request, durability full and normal.")

        @Option(help: "Concurrent clients.") var clients = 64
        @Option(help: "Seconds per run.") var duration = 5.0
        @Option(help: "Directory for the databases (default: .build-bench/ here; must be on a real disk for fsync to count).") var directory: String?
        @OptionGroup var output: ResultOptions

        func run() async throws {
            let base = directory ?? FileManager.default.currentDirectoryPath + "/.build-bench"
            let runDirectory = base + "/storage-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: runDirectory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: runDirectory) }
            var results: [StorageRunResult] = []
            print("fdatasync on this disk: \(format(StorageBenchmark.fsyncMicros(directory: runDirectory), 0)) µs per call")
            print("durability  mode                          writes/s   commits  mean batch  writer µs/write")
            for durability in [Connection.Synchronous.full, .normal] {
                var pair: [StorageRunResult] = []
                for group in [false, true] {
                    let result = try await StorageBenchmark.run(directory: runDirectory, durability: durability, groupCommit: group, clients: clients, seconds: duration)
                    pair.append(result)
                    results.append(result)
                    print("\(durability.rawValue.padding(toLength: 11, withPad: " ", startingAt: 0)) \(result.mode.padding(toLength: 29, withPad: " ", startingAt: 0)) \(format(result.writesPerSecond, 0).padding(toLength: 10, withPad: " ", startingAt: 0)) \(String(result.commits).padding(toLength: 8, withPad: " ", startingAt: 0)) \(format(result.meanBatch).padding(toLength: 11, withPad: " ", startingAt: 0)) \(result.writerCPUMicrosPerWrite.map { format($0, 0) } ?? "-")")
                }
                print("  ratio group/single (\(durability.rawValue)): \(format(pair[1].writesPerSecond / max(pair[0].writesPerSecond, 1), 1))x")
                if let perWrite = pair[1].writerCPUMicrosPerWrite, perWrite > 0 {
                    // One thread runs every transaction, so group commit cannot go faster than
                    // one write per `perWrite` µs of its CPU, however cheap the flush becomes.
                    let ceiling = 1_000_000 / perWrite / max(pair[0].writesPerSecond, 1)
                    print("  ceiling of that ratio here: \(format(ceiling, 1))x (1 / writer CPU per write in a batch, against one transaction per request)")
                }
            }
            try output.write(results)
        }
    }
}
