import DatabaseAccess
import Foundation
import PhotosTestSupport
import SQLiteStore
import Synchronization
import Testing

@Suite("DatabaseWriter and readers")
struct WriterTests {
    static func makeDatabase(_ directory: TemporaryDirectory) throws -> SQLiteDatabase {
        let path = directory.file("writer.db")
        let setup = try Connection(path: path)
        try setup.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
        setup.close()
        return try SQLiteDatabase(path: path, readerCount: 2, maxBatchSize: 32)
    }

    @Test("concurrent writes all commit and are batched together")
    func groupCommit() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Self.makeDatabase(directory)
        defer { database.close() }
        let count = 500
        try await withThrowingTaskGroup(of: Int64.self) { group in
            for index in 0..<count {
                group.addTask {
                    try await database.writer.write { connection in
                        try connection.execute("INSERT INTO items (name) VALUES (\("item-\(index)"))")
                        return connection.lastInsertRowID
                    }
                }
            }
            var ids = Set<Int64>()
            for try await id in group { ids.insert(id) }
            #expect(ids.count == count)
        }
        let total = try await database.read { try await $0.queryOne("SELECT count(*) FROM items")?.int(0) ?? 0 }
        #expect(total == count)
        let stats = database.writer.stats
        #expect(stats.requests == count)
        #expect(stats.commits <= count)
        #expect(stats.largestBatch <= 32)
    }

    @Test("a failing request is rolled back alone; its neighbours commit")
    func failingNeighbour() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Self.makeDatabase(directory)
        defer { database.close() }
        try await database.write { try await $0.execute("INSERT INTO items (name) VALUES ('taken')") }
        let results = await withTaskGroup(of: (Int, Bool).self) { group in
            for index in 0..<100 {
                group.addTask {
                    do {
                        try await database.write { connection in
                            try await connection.execute("INSERT INTO items (name) VALUES (\("ok-\(index)"))")
                            if index % 10 == 0 {
                                // Half-done work, then a constraint violation: none of it may stay.
                                try await connection.execute("INSERT INTO items (name) VALUES ('taken')")
                            }
                        }
                        return (index, true)
                    } catch {
                        return (index, false)
                    }
                }
            }
            var results: [Int: Bool] = [:]
            for await (index, ok) in group { results[index] = ok }
            return results
        }
        for (index, ok) in results { #expect(ok == (index % 10 != 0), "request \(index)") }
        let names = try await database.read { connection in
            await Set(try connection.query("SELECT name FROM items").map { try $0.string(0) })
        }
        #expect(names.count == 1 + 90)
        for index in stride(from: 0, to: 100, by: 10) { #expect(!names.contains("ok-\(index)")) }
        // Rolled-back requests are not counted as committed.
        #expect(database.writer.stats.requests == 1 + 90)
    }

    /// Thread ids of this process named `name` (Linux: /proc/self/task/*/comm).
    static func threads(named name: String) -> Set<String> {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return Set(tasks.filter { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) == name
        })
    }

    /// The name the operating system has for the calling thread.
    static func currentThreadName() -> String {
        (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
    }

    /// A helper a service would write: a nonisolated `async` function awaiting the connection.
    static func threadOfStatement(on connection: any DatabaseConnection) async throws -> String {
        _ = try await connection.query("SELECT count(*) FROM items")
        return currentThreadName()
    }

    @Test("a transaction's closure, the statements it awaits and the helpers it calls run on the writer's (or the reader's) own thread")
    func closuresRunOnTheStoresThreads() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Self.makeDatabase(directory)
        defer { database.close() }
        // Many at once, so that batches form and requests wait: a hop to the global pool after
        // any of their awaits would show as a thread of another name.
        try await withThrowingTaskGroup(of: [String].self) { group in
            for index in 0..<64 {
                group.addTask {
                    let written = try await database.write { connection in
                        let before = Self.currentThreadName()
                        try await connection.execute("INSERT INTO items (name) VALUES (\("thread-\(index)"))")
                        let helper = try await Self.threadOfStatement(on: connection)
                        return [before, helper, Self.currentThreadName()]
                    }
                    let read = try await database.read { connection in
                        [Self.currentThreadName(), try await Self.threadOfStatement(on: connection)]
                    }
                    return written + read
                }
            }
            for try await names in group {
                #expect(Array(names.prefix(3)) == ["sqlite-writer", "sqlite-writer", "sqlite-writer"])
                #expect(names.dropFirst(3).allSatisfy { $0.hasPrefix("sqlite-reader-") }, "\(names)")
                #expect(names[3] == names[4])
            }
        }
    }

    @Test("a writer dropped without close() still ends its thread")
    func droppedWriterEndsThread() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let path = directory.file("dropped.db")
        // A name of its own: other suites' writers, running in parallel for any length of
        // time, are named sqlite-writer.
        let name = "sqlite-dropped"
        var ours: Set<String> = []
        do {
            let writer = try DatabaseWriter(path: path, threadName: name)
            try await writer.write { try $0.execute("CREATE TABLE t (x)") }
            ours = Self.threads(named: name)
            #expect(ours.count == 1)
        }
        let deadline = ContinuousClock.now + .seconds(30)
        while !Self.threads(named: name).isDisjoint(with: ours) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(Self.threads(named: name).isDisjoint(with: ours), "the dropped writer's thread is still running")
    }

    @Test("past maxQueuedRequests waiting, a write fails at once as overloaded")
    func boundedQueue() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let writer = try DatabaseWriter(path: directory.file("queue.db"), maxBatchSize: 1, maxQueuedRequests: 2)
        defer { writer.close() }
        let gate = DispatchSemaphore(value: 0)
        let started = Flag()
        // The first request holds the writer thread; two more may wait; the fourth is refused.
        // (Only the writer thread blocks: a test must not block Swift's few cooperative threads.)
        async let held: Void = writer.write { _ in started.value.store(true, ordering: .relaxed); gate.wait() }
        while !started.value.load(ordering: .relaxed) { try await Task.sleep(for: .milliseconds(5)) }
        async let second: Void = writer.write { _ in }
        async let third: Void = writer.write { _ in }
        while writer.queuedRequests < 2 { try await Task.sleep(for: .milliseconds(5)) }
        await #expect(throws: DatabaseOverloadedError.self) { try await writer.write { _ in } }
        gate.signal()
        _ = try await (held, second, third)
    }

    @Test("readers see committed writes; a read transaction is one snapshot")
    func readers() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Self.makeDatabase(directory)
        defer { database.close() }
        try await database.write { try await $0.execute("INSERT INTO items (name) VALUES ('a')") }
        let count = try await database.read { try await $0.queryOne("SELECT count(*) FROM items")?.int(0) ?? 0 }
        #expect(count == 1)
        await #expect(throws: SQLiteError.self) {
            try await database.read { try await $0.execute("INSERT INTO items (name) VALUES ('nope')") }
        }
    }

    @Test("closing waits for what is running without holding a thread of the cooperative pool")
    func closeDoesNotBlockThePool() async throws {
        // One database more than the pool has threads, each with a write held on its writer
        // thread: a close that blocked its caller would take every pool thread, and nothing else
        // could run until the writes end. A probe task must run meanwhile.
        let count = ProcessInfo.processInfo.activeProcessorCount + 1
        let directories = try (0..<count).map { _ in try TemporaryDirectory() }
        defer { for directory in directories { directory.remove() } }
        let databases = try directories.map { try Self.makeDatabase($0) }
        let gates = databases.map { _ in DispatchSemaphore(value: 0) }
        let started = Counter()
        var held: [Task<Void, any Error>] = []
        for (database, gate) in zip(databases, gates) {
            held.append(Task.detached { try await database.write { _ in started.value.add(1, ordering: .relaxed); gate.wait() } })
        }
        while started.value.load(ordering: .relaxed) < count { try await Task.sleep(for: .milliseconds(5)) }
        let closing = databases.map { database in Task.detached { await database.close() } }
        let closed = Counter()
        let probeRan = Flag()
        let probeRanWhileClosing = Flag()
        let probe = Task.detached {
            try? await Task.sleep(for: .milliseconds(100))
            probeRan.value.store(true, ordering: .relaxed)
        }
        // Off the pool: wait for the probe, note whether the closes were still waiting, then let
        // the writes end whatever happened (so a failure is a failure, not a hang). The closes
        // cannot finish before the gates open, so the wait's length only decides how long a
        // failure takes: a close that blocked the pool stops the probe however long we wait.
        // It is long because the whole suite runs in parallel on two cores in CI, where other
        // tests' work can keep the probe from its thread for seconds (5 s was once too short).
        let watchdog = Thread {
            let deadline = Date().addingTimeInterval(60)
            while !probeRan.value.load(ordering: .relaxed) && Date() < deadline { usleep(5_000) }
            probeRanWhileClosing.value.store(probeRan.value.load(ordering: .relaxed) && closed.value.load(ordering: .relaxed) == 0, ordering: .relaxed)
            for gate in gates { gate.signal() }
        }
        watchdog.start()
        for task in closing {
            await task.value
            closed.value.add(1, ordering: .relaxed)
        }
        for task in held { try await task.value }
        await probe.value
        let unblocked = probeRanWhileClosing.value.load(ordering: .relaxed)
        #expect(unblocked, "the pool was blocked while the databases closed")
        for database in databases {
            await #expect(throws: DatabaseClosedError.self) { try await database.write { _ in } }
        }
    }

    @Test("requests racing a close either commit or fail as closed; none is lost or left waiting")
    func requestsRacingClose() async throws {
        for round in 0..<20 {
            let directory = try TemporaryDirectory()
            defer { directory.remove() }
            let database = try Self.makeDatabase(directory)
            let outcomes = await withTaskGroup(of: Bool?.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        do {
                            try await database.write { try await $0.execute("INSERT INTO items (name) VALUES (\("r\(round)-\(index)"))") }
                            return true
                        } catch is DatabaseClosedError {
                            return false
                        } catch {
                            return nil
                        }
                    }
                    if index == 100 { group.addTask { await database.close(); return false } }
                }
                var committed = 0
                var unexpected = 0
                for await outcome in group {
                    switch outcome {
                    case true?: committed += 1
                    case false?: break
                    case nil: unexpected += 1
                    }
                }
                return (committed, unexpected)
            }
            #expect(outcomes.1 == 0)
            // Every write acknowledged as committed is in the file, and no other.
            let check = try Connection(path: directory.file("writer.db"))
            defer { check.close() }
            let stored = try await check.queryOne("SELECT count(*) FROM items")?.int(0) ?? -1
            #expect(stored == outcomes.0, "round \(round): \(outcomes.0) acknowledged, \(stored) stored")
        }
    }

    @Test("after close, requests fail cleanly")
    func closed() async throws {
        let directory = try TemporaryDirectory()
        defer { directory.remove() }
        let database = try Self.makeDatabase(directory)
        await database.close()
        await #expect(throws: DatabaseClosedError.self) {
            try await database.write { try await $0.execute("INSERT INTO items (name) VALUES ('late')") }
        }
    }
}

/// A flag shared with the writer thread.
private final class Flag: Sendable {
    let value = Atomic<Bool>(false)
}

private final class Counter: Sendable {
    let value = Atomic<Int>(0)
}
