import ArgumentParser
import Foundation
import Histogram
import PhotosdProcess

/// The figures of one receipts run: a bystander's actions alone, then beside clients fetching a
/// long session's receipt in a loop.
struct ReceiptRunResult: Codable {
    /// `receipts.maxRows` of the photosd measured.
    var maxRows: Int
    var trailRows: Int
    var fetchers: Int
    var receiptsPerSecond: Double
    var receiptMeanMs: Double
    var receiptBytes: Int
    var aloneP50Ms: Double
    var aloneP95Ms: Double
    var aloneActionsPerSecond: Double
    /// Beside the fetchers asking for a plain read instead (`GET /v1/sessions/{id}`): what any
    /// request in a tight loop costs a bystander on this machine.
    var baselineP50Ms: Double
    var baselineP95Ms: Double
    var baselinePerSecond: Double
    /// Beside the fetchers asking for the one receipt (the newest rows).
    var besideP50Ms: Double
    var besideP95Ms: Double
    var besideActionsPerSecond: Double
    /// Beside the fetchers asking each time for another receipt (a random `fromSeq`): no two alike.
    var distinctP50Ms: Double
    var distinctP95Ms: Double
    var distinctReceiptsPerSecond: Double
    var distinctReceiptMeanMs: Double
    /// besideP95Ms / baselineP95Ms.
    var p95RatioToBaseline: Double
    var peakRSSMegabytes: Double
}

extension PhotosBench {
    struct Receipts: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "What fetching a long session's receipt costs a bystander: one client's actions alone, then beside clients fetching the receipt in a loop.",
            discussion: """
                A session of --rows audit rows is built through the API; then a bystander (its own session) walks \
                photo → back for --duration seconds alone, and again while --fetchers clients GET the long session's \
                receipt without pause. Once per receipts.maxRows in --max-rows (1000, the default bound; 100000, as \
                good as none for this trail).
                """)

        @Option(help: "Rows in the long session's trail.") var rows = 13_500
        @Option(help: "Clients fetching its receipt in a loop.") var fetchers = 6
        @Option(help: "Seconds per phase.") var duration = 10.0
        @Option(help: "Comma-separated receipts.maxRows values; one photosd each.") var maxRows = "1000,100000"
        @Option(help: "Durability of the daemon: full or normal.") var durability = "full"
        @Option(help: "The photosd binary to start (default: next to photos-bench).") var photosd: String?
        @Option(help: "Directory for the temporary database (default: a new one under .build-bench/).") var directory: String?
        @OptionGroup var output: ResultOptions

        func run() async throws {
            let bounds = maxRows.split(separator: ",").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard !bounds.isEmpty, bounds.allSatisfy({ (1...100_000).contains($0) }) else { throw ValidationError("--max-rows lists numbers between 1 and 100000") }
            guard rows >= 10, fetchers >= 1, duration > 0 else { throw ValidationError("--rows ≥ 10, --fetchers ≥ 1 and --duration > 0") }
            print("maxRows  trail rows  receipt KB  bystander p50/p95 ms: alone   beside plain reads (/s)   beside one receipt (/s, ms)   beside distinct receipts (/s, ms)   one receipt p95 ÷ plain  peak RSS MB")
            var results: [ReceiptRunResult] = []
            for bound in bounds {
                let r = try runOnce(maxRows: bound)
                results.append(r)
                func pair(_ a: Double, _ b: Double) -> String { "\(format(a, 2))/\(format(b, 2))" }
                print([
                    String(r.maxRows).padding(toLength: 8, withPad: " ", startingAt: 0), String(r.trailRows).padding(toLength: 11, withPad: " ", startingAt: 0),
                    format(Double(r.receiptBytes) / 1_024).padding(toLength: 11, withPad: " ", startingAt: 0),
                    pair(r.aloneP50Ms, r.aloneP95Ms).padding(toLength: 28, withPad: " ", startingAt: 0),
                    "\(pair(r.baselineP50Ms, r.baselineP95Ms)) (\(format(r.baselinePerSecond, 0)))".padding(toLength: 25, withPad: " ", startingAt: 0),
                    "\(pair(r.besideP50Ms, r.besideP95Ms)) (\(format(r.receiptsPerSecond, 0)), \(format(r.receiptMeanMs, 2)))".padding(toLength: 29, withPad: " ", startingAt: 0),
                    "\(pair(r.distinctP50Ms, r.distinctP95Ms)) (\(format(r.distinctReceiptsPerSecond, 0)), \(format(r.distinctReceiptMeanMs, 2)))".padding(toLength: 35, withPad: " ", startingAt: 0),
                    format(r.p95RatioToBaseline, 2).padding(toLength: 24, withPad: " ", startingAt: 0), format(r.peakRSSMegabytes),
                ].joined(separator: " "))
            }
            try output.write(results)
        }

        /// A session made through `connection`: its path and `Authorization` header line.
        static func session(_ connection: HTTPConnection) throws -> (path: String, authorization: String) {
            let created = try connection.request("POST", "/v1/sessions")
            let object = try? JSONSerialization.jsonObject(with: Data(created.body)) as? [String: Any]
            guard created.status == 201, let id = object?["id"] as? String, let secret = object?["sessionSecret"] as? String else {
                throw BenchError("POST /v1/sessions answered \(created.status): \(created.text.prefix(200))")
            }
            return ("/v1/sessions/\(id)", "Authorization: Session \(secret)\r\n")
        }

        /// One photo → back round on a session; the two answers' times in µs into `histogram`.
        static func walk(_ connection: HTTPConnection, _ session: (path: String, authorization: String), into histogram: inout Histogram<UInt64>?) throws {
            for body in [#"{"action":"selectPhoto","photoId":1}"#, #"{"action":"back"}"#] {
                let start = ContinuousClock.now
                let answer = try connection.request("POST", session.path + "/actions", body: body, headers: session.authorization)
                guard answer.status == 200 else { throw BenchError("an action answered \(answer.status): \(answer.text.prefix(200))") }
                let elapsed = ContinuousClock.now - start
                _ = histogram?.record(UInt64(elapsed.components.seconds * 1_000_000 + elapsed.components.attoseconds / 1_000_000_000_000))
            }
        }

        /// The bystander's actions for `seconds`, beside whatever else runs.
        static func bystander(port: Int, seconds: Double) throws -> (Histogram<UInt64>, Int) {
            let connection = try HTTPConnection(host: "127.0.0.1", port: port)
            let session = try session(connection)
            var histogram: Histogram<UInt64>? = Histogram<UInt64>(numberOfSignificantValueDigits: .three)
            let end = ContinuousClock.now + .milliseconds(Int(seconds * 1_000))
            var count = 0
            while ContinuousClock.now < end {
                try walk(connection, session, into: &histogram)
                count += 2
            }
            return (histogram ?? Histogram<UInt64>(), count)
        }

        /// Fetchers asking `path(i)` without pause while the bystander walks for `duration`:
        /// the bystander's figures and the fetchers' (count, mean seconds).
        func beside(port: Int, authorization: String, path: @escaping @Sendable (Int) -> String) throws -> (bystander: (Histogram<UInt64>, Int), fetched: Int, seconds: Double) {
            let stop = ManagedAtomicFlag()
            let group = DispatchGroup()
            let counts = FetchCounts(fetchers)
            for index in 0..<fetchers {
                group.enter()
                Thread.detachNewThread {
                    defer { group.leave() }
                    guard let connection = try? HTTPConnection(host: "127.0.0.1", port: port) else { return }
                    var round = 0
                    while !stop.isSet {
                        round += 1
                        let start = ContinuousClock.now
                        guard let answer = try? connection.request("GET", path(index * 1_000_003 + round), headers: authorization), answer.status == 200 else {
                            counts.failed(index)
                            continue
                        }
                        counts.fetched(index, ContinuousClock.now - start)
                    }
                }
            }
            Thread.sleep(forTimeInterval: 0.5)
            let bystander = try Self.bystander(port: port, seconds: duration)
            stop.set()
            group.wait()
            let (fetched, seconds, failures) = counts.total
            if failures > 0 { print("warning: \(failures) fetches failed") }
            return (bystander, fetched, fetched == 0 ? 0 : seconds / Double(fetched))
        }

        func runOnce(maxRows bound: Int) throws -> ReceiptRunResult {
            let base = directory ?? FileManager.default.currentDirectoryPath + "/.build-bench"
            let runDirectory = base + "/receipts-\(UUID().uuidString.prefix(8))"
            try FileManager.default.createDirectory(atPath: runDirectory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: runDirectory) }
            let daemon = try PhotosdProcess(
                binary: photosd ?? PhotosdProcess.besideBenchmark, arguments: ["--seed-demo", "--db", runDirectory + "/photos.db"],
                environment: [
                    "PHOTOSD_DATABASE_DURABILITY": durability, "PHOTOSD_LOG_LEVEL": "notice", "PHOTOSD_LIMITS_SESSIONS_PER_MINUTE_PER_ADDRESS": "0",
                    "PHOTOSD_RECEIPTS_MAX_ROWS": String(bound), "PHOTOSD_AUDIT_CHECKPOINT_INTERVAL_SECONDS": "1",
                ])
            defer { daemon.stop() }

            // The long session: photo → back until its trail has the rows asked for.
            let builder = try HTTPConnection(host: "127.0.0.1", port: daemon.port)
            let long = try Self.session(builder)
            var none: Histogram<UInt64>?
            var trailRows = 0
            while trailRows < rows {
                for _ in 0..<250 { try Self.walk(builder, long, into: &none) }
                let events = try builder.request("GET", long.path + "/events?after=\(max(0, trailRows - 1))&limit=1000", headers: long.authorization)
                let list = (try? JSONSerialization.jsonObject(with: Data(events.body)) as? [String: Any])?["events"] as? [[String: Any]] ?? []
                // Ask from the last seq seen: the newest is at most 1,000 on.
                var newest = trailRows
                var page = list
                while let last = page.last?["seq"] as? Int, last > newest {
                    newest = last
                    let next = try builder.request("GET", long.path + "/events?after=\(newest)&limit=1000", headers: long.authorization)
                    page = (try? JSONSerialization.jsonObject(with: Data(next.body)) as? [String: Any])?["events"] as? [[String: Any]] ?? []
                }
                guard newest > trailRows else { throw BenchError("the long session's trail did not grow (events answered \(events.status))") }
                trailRows = newest
            }
            // Its receipt, once a checkpoint has signed the newest row.
            var receipt = try builder.request("GET", long.path + "/receipt", headers: long.authorization)
            let deadline = ContinuousClock.now + .seconds(30)
            while receipt.status == 202, ContinuousClock.now < deadline {
                Thread.sleep(forTimeInterval: 0.2)
                receipt = try builder.request("GET", long.path + "/receipt", headers: long.authorization)
            }
            guard receipt.status == 200 else { throw BenchError("the receipt answered \(receipt.status): \(receipt.text.prefix(200))") }
            let receiptBytes = receipt.body.count

            // Alone.
            let alone = try Self.bystander(port: daemon.port, seconds: duration)

            let plain = try beside(port: daemon.port, authorization: long.authorization) { _ in long.path }
            let one = try beside(port: daemon.port, authorization: long.authorization) { _ in long.path + "/receipt" }
            let newest = trailRows
            let distinct = try beside(port: daemon.port, authorization: long.authorization) { n in long.path + "/receipt?fromSeq=\(1 + (n &* 7_919) % newest)" }
            let peak = Double(daemon.peakResidentBytes) / 1_048_576
            let phase = duration + 0.5

            func ms(_ histogram: Histogram<UInt64>, _ percentile: Double) -> Double { Double(histogram.valueAtPercentile(percentile)) / 1_000 }
            return ReceiptRunResult(
                maxRows: bound, trailRows: trailRows, fetchers: fetchers,
                receiptsPerSecond: Double(one.fetched) / phase, receiptMeanMs: one.seconds * 1_000, receiptBytes: receiptBytes,
                aloneP50Ms: ms(alone.0, 50), aloneP95Ms: ms(alone.0, 95), aloneActionsPerSecond: Double(alone.1) / duration,
                baselineP50Ms: ms(plain.bystander.0, 50), baselineP95Ms: ms(plain.bystander.0, 95), baselinePerSecond: Double(plain.fetched) / phase,
                besideP50Ms: ms(one.bystander.0, 50), besideP95Ms: ms(one.bystander.0, 95), besideActionsPerSecond: Double(one.bystander.1) / duration,
                distinctP50Ms: ms(distinct.bystander.0, 50), distinctP95Ms: ms(distinct.bystander.0, 95),
                distinctReceiptsPerSecond: Double(distinct.fetched) / phase, distinctReceiptMeanMs: distinct.seconds * 1_000,
                p95RatioToBaseline: ms(one.bystander.0, 95) / max(ms(plain.bystander.0, 95), 0.001), peakRSSMegabytes: peak)
        }
    }
}

/// A flag set once, read from other threads.
final class ManagedAtomicFlag: @unchecked Sendable {
    // @unchecked: `value` is read and written only under `lock`.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}

/// The fetchers' counts: receipts fetched, the time they took, failures.
final class FetchCounts: @unchecked Sendable {
    // @unchecked: every field is read and written only under `lock`.
    private let lock = NSLock()
    private var fetchedCount: [Int]
    private var seconds: [Double]
    private var failures: [Int]

    init(_ fetchers: Int) {
        fetchedCount = Array(repeating: 0, count: fetchers)
        seconds = Array(repeating: 0, count: fetchers)
        failures = Array(repeating: 0, count: fetchers)
    }

    func fetched(_ index: Int, _ elapsed: Duration) {
        lock.withLock {
            fetchedCount[index] += 1
            seconds[index] += Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        }
    }

    func failed(_ index: Int) { lock.withLock { failures[index] += 1 } }

    var total: (fetched: Int, seconds: Double, failures: Int) {
        lock.withLock { (fetchedCount.reduce(0, +), seconds.reduce(0, +), failures.reduce(0, +)) }
    }
}
