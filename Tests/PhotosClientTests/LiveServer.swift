import Foundation
import PhotosClient
import PhotosTestSupport
import PhotosdProcess
import Testing

/// A real photosd for the client's tests: the demo catalogue (5 photos) and the user `alice`
/// (password `wonderland`), on a SQLite file in a temporary directory.
final class LiveServer: Sendable {
    static let username = "alice"
    static let password = "wonderland"

    let directory: TemporaryDirectory
    let process: PhotosdProcess

    /// Migrates, adds alice and the flow experiments (`[point, variants]` each), then starts
    /// photosd (`--seed-demo`), its environment plus `environment`.
    init(environment: [String: String] = [:], experiments: [(point: String, variants: String)] = []) async throws {
        directory = try TemporaryDirectory()
        try FileManager.default.createDirectory(atPath: directory.file("data"), withIntermediateDirectories: true)
        let admin = BuiltProducts.binDirectory + "/photos-admin"
        let experimentCommands = experiments.enumerated().map { index, experiment in
            ["experiments", "add", "experiment-\(index)", "--point", experiment.point, "--variants", experiment.variants, "--db", "data/photos.db"]
        }
        for arguments in [["migrate", "--db", "data/photos.db"], ["users", "add", Self.username, "--password-stdin", "--db", "data/photos.db"]] + experimentCommands {
            let result = try await runProcess(admin, arguments, stdin: Self.password, in: directory.path, environment: ["PHOTOSD_AUTH_BCRYPT_COST": "4"])
            #expect(result.status == 0, "\(result.output)")
        }
        process = try await Self.start(in: directory.path, environment: environment)
    }

    private init(directory: TemporaryDirectory) async throws {
        self.directory = directory
        process = try await Self.start(in: directory.path)
    }

    static func start(in path: String, environment: [String: String] = [:]) async throws -> PhotosdProcess {
        try await offThePool {
            try PhotosdProcess(
                binary: BuiltProducts.binDirectory + "/photosd", arguments: ["--seed-demo"], directory: path,
                environment: ["PHOTOSD_AUTH_BCRYPT_COST": "4", "PHOTOSD_DATABASE_DURABILITY": "normal"].merging(environment) { $1 })
        }
    }

    var url: URL { URL(string: process.baseURL)! }

    /// A new driver for this server.
    func driver(retry: RetryPolicy = RetryPolicy()) -> NavigationDriver { NavigationDriver(serverURL: url, retry: retry) }

    /// Stops this photosd and starts another on the same directory (a restart).
    func restarted() async throws -> LiveServer {
        _ = process.stop()
        return try await LiveServer(directory: directory)
    }

    func stop() {
        _ = process.stop()
        directory.remove()
    }
}

/// The tests' own plain model of an app's stacks, written apart from `NavigationState` so that
/// the commands are checked against an independent reading of their meaning.
struct StackModel: Equatable {
    var stacks: [[Screen]]
    var tabs: [Tab: [Screen]] = [:]
    var selected: Tab?

    /// An app just launched to show `session`: an empty root stack, nothing selected, the tabs
    /// it will not select as `session` has them.
    init(launching session: Session) {
        stacks = [[]]
        let other = StackModel(session)
        tabs = other.tabs.filter { $0.key != other.selected }
    }

    /// Read from the answer as decoded (`Session.generated`), not through `NavigationState`.
    init(_ session: Session) {
        stacks = session.generated.navigation.map { $0.screens.map(Screen.init) }
        selected = session.generated.tabs.map { Tab(rawValue: $0.selected.value2 ?? "") }
        for item in session.generated.tabs?.items ?? [] { tabs[Tab(rawValue: item.tab.value2 ?? "")] = item.screens.map(Screen.init) }
    }

    mutating func apply(_ command: NavigationCommand) {
        switch command {
        case .push(let screen): stacks[stacks.count - 1].append(screen)
        case .pop(let count):
            #expect(count >= 1 && count < stacks[stacks.count - 1].count, "pop(\(count)) of \(stacks[stacks.count - 1].count) screens")
            stacks[stacks.count - 1].removeLast(count)
        case .popToRoot:
            #expect(stacks[stacks.count - 1].count > 1, "popToRoot of a root-only stack")
            stacks[stacks.count - 1] = [stacks[stacks.count - 1][0]]
        case .replaceTop(let screen):
            #expect(!stacks[stacks.count - 1].last!.isSameScreen(as: screen), "replaceTop of the same screen: an update")
            stacks[stacks.count - 1][stacks[stacks.count - 1].count - 1] = screen
        case .update(let screen):
            // The same screen nearest the top: the top, or one below it.
            let index = stacks[stacks.count - 1].lastIndex { $0.isSameScreen(as: screen) }
            #expect(index != nil, "update of a screen the stack does not hold: a replaceTop")
            if let index {
                #expect(stacks[stacks.count - 1][index] != screen, "update without new values")
                stacks[stacks.count - 1][index] = screen
            }
        case .present(let stack):
            #expect(stack.presentation == .modal)
            stacks.append(stack.screens)
        case .dismiss:
            #expect(stacks.count > 1, "dismiss with no modal stack")
            stacks.removeLast()
        case .selectTab(let tab):
            #expect(stacks.count == 1, "selectTab over a modal stack")
            if let selected { tabs[selected] = stacks[0] }
            selected = tab
            stacks = [tabs[tab] ?? []]
        }
        if let selected { tabs[selected] = stacks[0] }
    }

    /// The server's `navigation`, as lists of screens.
    static func screens(_ session: Session) -> [[Screen]] { session.navigation.stacks.map(\.screens) }
}

extension Session {
    /// The top screen's name.
    var topName: ScreenName? { top?.name }
    /// The coordinator tree as `kind(children…)`.
    var tree: String {
        func render(_ node: Components.Schemas.Coordinator) -> String {
            (node.kind.value1?.rawValue ?? node.kind.value2 ?? "?") + (node.children.isEmpty ? "" : "(" + node.children.map(render).joined(separator: ",") + ")")
        }
        return generated.coordinators.map(render) ?? ""
    }
}
