import Foundation
import PhotosClient
import Testing

/// One client session driven through `NavigationDriver`, checking after every answer that the
/// commands, applied to the tests' own `StackModel`, give exactly the server's `navigation`.
final class Journey {
    let driver: NavigationDriver
    var model: StackModel
    private(set) var session: Session
    /// The session's secret, as `start` received it (for another device to `attach`).
    let secret: String
    /// The commands of the last step.
    private(set) var commands: [NavigationCommand] = []
    private(set) var outcome: Outcome?

    init(_ driver: NavigationDriver, layout: Layout = .stack, link: String? = nil) async throws {
        self.driver = driver
        session = try await driver.start(layout: layout, link: link)
        secret = await driver.sessionSecret ?? ""
        model = StackModel(session)
    }

    /// Sends `action`, applies its commands and checks the model against the server.
    @discardableResult
    func send(_ action: Action, sourceLocation: SourceLocation = #_sourceLocation) async throws -> [NavigationCommand] {
        let step = try await driver.send(action)
        commands = step.commands
        outcome = step.outcome
        session = step.session
        for command in step.commands { model.apply(command) }
        await check(sourceLocation: sourceLocation)
        return step.commands
    }

    /// The model equals the server's navigation, and so does the driver's own `shown`.
    func check(sourceLocation: SourceLocation = #_sourceLocation) async {
        #expect(model.stacks == StackModel.screens(session), "after \(commands)", sourceLocation: sourceLocation)
        let shown = await driver.shown.stacks.map(\.screens)
        #expect(shown == StackModel.screens(session), sourceLocation: sourceLocation)
    }

    var top: ScreenName? { session.topName }
    var stacks: [[ScreenName]] { session.navigation.stacks.map { $0.screens.map(\.name) } }
}

/// `photo` with `photoId` and `purchased`, as the server writes it.
func photo(_ id: Int, purchased: Bool) -> Screen { Screen(.photo, photoId: id, purchased: purchased) }
/// A screen with no parameters.
func screen(_ name: ScreenName) -> Screen { Screen(name) }
