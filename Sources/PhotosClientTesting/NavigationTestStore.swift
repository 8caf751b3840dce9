import PhotosClient

/// Exhaustive assertions for an app's navigation tests, in the manner of a test store: a
/// `NavigationModel` over a `FakePhotosServer`, where each step says how what the app shows
/// changes — as the commands the test expects, applied to what it showed before — and anything
/// else is a failure: a screen more or less, a tab, a sheet, other commands, another outcome.
///
/// ```swift
/// let store = try await NavigationTestStore(server: FakePhotosServer(users: ["alice": "wonderland"]))
/// try await store.send(.selectPhoto(2), [.push(Screen(.photo, photoId: 2, purchased: false))])
/// try await store.send(.buy, [.push(Screen(.signIn))])
/// try await store.send(.submit(username: "alice", password: "wonderland"),
///                      [.replaceTop(Screen(.buy, photoId: 2, purchased: false))], outcome: .signedIn)
/// try await store.expectError(.showTerms, "not offered on buy") {
///     if case .actionNotAvailable = $0 { true } else { false }
/// }
/// ```
///
/// A failure is thrown (`NavigationTestStore.Mismatch`, saying what was expected and what the
/// app shows), so that XCTest and Swift Testing both report it where the step is, and the
/// library needs neither.
@available(iOS 17, *)
@MainActor
public final class NavigationTestStore {
    /// The server the model talks to (add users, experiments, limits; act from outside).
    public let server: FakePhotosServer
    /// The model under test, as a view would hold it.
    public let model: NavigationModel
    /// What the test has said the app shows, after the last step.
    public private(set) var expected: NavigationState

    /// A step whose result is not what the test said: `expected` and `actual` in words.
    public struct Mismatch: Error, CustomStringConvertible {
        /// The step (`send(selectPhoto(2))`).
        public var step: String
        /// What differs, one line each.
        public var differences: [String]
        public var description: String { "\(step): " + differences.joined(separator: "; ") }
    }

    /// Starts a session on `server` (in `layout`, at `link`) through a new model, and takes
    /// what it shows as the first expectation. Requests are not retried: a refusal the test
    /// scripts is seen as it comes.
    public init(server: FakePhotosServer, layout: Layout = .stack, link: String? = nil) async throws {
        self.server = server
        model = NavigationModel(driver: server.driver(retry: .never))
        await model.start(layout: layout, link: link)
        if let error = model.lastError { throw Mismatch(step: "start", differences: ["the session did not start: \(error)"]) }
        expected = model.state
    }

    /// Sends `action` and checks that the app now shows what it showed with `commands` applied,
    /// that the step's commands are exactly `commands`, and (when given) its `outcome`; `update`
    /// may change the expectation further (a screen whose values changed in place, say). Returns
    /// the step.
    @discardableResult
    public func send(
        _ action: Action, _ commands: [NavigationCommand], outcome: Outcome? = nil, _ update: (inout NavigationState) -> Void = { _ in }
    ) async throws -> NavigationDriver.Step {
        let name = "send(\(action))"
        guard let step = await model.send(action) else {
            throw Mismatch(step: name, differences: ["failed: \(model.lastError.map { "\($0)" } ?? "no step")"])
        }
        var differences: [String] = []
        if step.commands != commands { differences.append("commands \(step.commands), expected \(commands)") }
        if let outcome, step.outcome != outcome { differences.append("outcome \(step.outcome), expected \(outcome)") }
        for command in commands { expected.apply(command) }
        update(&expected)
        differences += Self.differences(shown: model.state, expected: expected)
        expected = model.state  // the next step starts from what the app shows
        if !differences.isEmpty { throw Mismatch(step: name, differences: differences) }
        return step
    }

    /// Sends `action`, which must fail with an error `matches` accepts, and checks that the app
    /// shows what it showed before (`update` for what a refusal changes, e.g. after a conflict
    /// the session as it is now).
    public func expectError(
        _ action: Action, _ what: String = "", matches: (NavigationError) -> Bool, _ update: (inout NavigationState) -> Void = { _ in }
    ) async throws {
        let name = "send(\(action))" + (what.isEmpty ? "" : " (\(what))")
        if let step = await model.send(action) {
            throw Mismatch(step: name, differences: ["succeeded (\(step.outcome), \(step.commands)); an error was expected"])
        }
        var differences: [String] = []
        if let error = model.lastError, !matches(error) { differences.append("failed with \(error), not the error expected") }
        update(&expected)
        differences += Self.differences(shown: model.state, expected: expected)
        expected = model.state
        if !differences.isEmpty { throw Mismatch(step: name, differences: differences) }
    }

    /// Reads the session again (after a change the test made from outside: `server.signIn(_:
    /// intoSession:)`, another driver) and checks that the app shows what it showed, changed
    /// by `update`.
    public func refresh(_ update: (inout NavigationState) -> Void) async throws {
        await model.refresh()
        if let error = model.lastError { throw Mismatch(step: "refresh", differences: ["failed: \(error)"]) }
        update(&expected)
        let differences = Self.differences(shown: model.state, expected: expected)
        expected = model.state
        if !differences.isEmpty { throw Mismatch(step: "refresh", differences: differences) }
    }

    /// What differs between what the app shows and what the test expected, in words: each
    /// stack, then each tab left aside.
    static func differences(shown: NavigationState, expected: NavigationState) -> [String] {
        guard shown != expected else { return [] }
        var lines: [String] = []
        for index in 0..<max(shown.stacks.count, expected.stacks.count) {
            let actual = shown.stacks.indices.contains(index) ? "\(shown.stacks[index])" : "nothing"
            let wanted = expected.stacks.indices.contains(index) ? "\(expected.stacks[index])" : "nothing"
            if actual != wanted { lines.append("stack \(index) shows \(actual), expected \(wanted)") }
        }
        for tab in Set(shown.tabs.keys).union(expected.tabs.keys).sorted(by: { $0.rawValue < $1.rawValue }) where shown.tabs[tab] != expected.tabs[tab] {
            lines.append("tab \(tab) holds \(shown.tabs[tab] ?? []), expected \(expected.tabs[tab] ?? [])")
        }
        return lines.isEmpty ? ["shows \(shown), expected \(expected)"] : lines
    }
}
