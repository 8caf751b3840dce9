import Foundation
import Observation

/// A session's navigation as an observable model, for SwiftUI (`NavigationStack(path:)`,
/// `TabView(selection:)`, `.sheet`) and for UIKit (`setViewControllers`, observed with
/// `withObservationTracking`): the app binds its containers to it and sends actions through it;
/// what the server decides, and what changes elsewhere, shows up in `state` and the paths.
///
/// Both directions: the model writes the server's navigation into `state`, `path`, `paths` and
/// `selectedTab`; a change the *system* made on screen and wrote into them — a swipe-back
/// (`path` shorter), a sheet swiped down (`paths` one stack fewer), a tab tapped
/// (`selectedTab`) — is sent to the server as `userDid(…)`, so that nothing is undone or done
/// twice. A screen is pushed only by the server: a path the app makes longer is put back.
@available(iOS 17, *)
@MainActor
@Observable
public final class NavigationModel {
    /// The driver under the model (its session, secret, store and change feed).
    @ObservationIgnored public let driver: NavigationDriver
    /// What the app shows: the server's navigation after every answer and change, with the
    /// user's own gestures applied while their answer is on its way.
    public private(set) var state: NavigationState
    /// The session as the server last described it (the top screen's actions, the user).
    public private(set) var session: Session?
    /// The last request's error; nil again after the next one that succeeds.
    public private(set) var lastError: NavigationError?
    /// What happened to the session itself, beyond one request's error: for an app that tells
    /// the user (or its analytics) rather than only showing the new screens.
    public enum SessionEvent: Hashable, Sendable {
        /// A new session took the place of one that could not go on (`resume` or a `send` that
        /// met `unauthorized` or `sessionExpired`); `because` is what the old one answered.
        case replaced(because: NavigationError)
        /// The session ended on the server (`sessionExpired`: idle too long, or ended by an
        /// operator); the model keeps showing it until `startOver()`.
        case expired
        /// `follow()` stopped: the change feed ended with an error it cannot get past.
        case feedEnded(NavigationError)
    }

    /// The last `SessionEvent` (nil: none yet). Observable like the rest.
    public private(set) var lastEvent: SessionEvent?

    /// How `follow()` follows the session: `.live`, or `.polling` while the server refuses this
    /// address another long poll (the screen may then be a few seconds behind: a "stale" hint).
    public private(set) var feed: NavigationDriver.Feed = .live
    /// The step of the last action sent (`send`): its `outcome` and, after a sign-in, its
    /// `token`; nil before the first and after one that failed.
    public private(set) var lastStep: NavigationDriver.Step?

    /// The gestures sent and not yet answered, in order (nil once the last has its answer).
    @ObservationIgnored private var gestures: Task<Void, Never>?
    /// How many gestures were enqueued: the last one's number clears `gestures` as it ends.
    @ObservationIgnored private var gesturesEnqueued = 0

    /// What the system did on screen, as where it left the app: the sheets left, and how many
    /// screens the top stack kept (a swipe-back). Sent as `userDid` once no request is in
    /// flight, against the navigation as it is then — so that a swipe-back while a tap is on its
    /// way pops what the user saw, not the screen the tap brings.
    private enum Gesture {
        case leave(stacks: Int, depth: Int?)
        case select(Tab)
    }

    /// A model over `driver` (which may be attached already: the model shows what it shows).
    public init(driver: NavigationDriver) {
        self.driver = driver
        self.state = NavigationState(stacks: [])
    }

    // MARK: Paths

    /// The root stack's screens above its root (in a tabs session, the selected tab's): what a
    /// `NavigationStack(path:)` whose root view is the first screen binds to. Writing it shorter
    /// is a swipe-back (each screen gone is one `userDid(.back)`).
    public var path: [Screen] {
        get { paths.first ?? [] }
        set {
            var all = paths
            if all.isEmpty { all = [newValue] } else { all[0] = newValue }
            paths = all
        }
    }

    /// One path per stack, bottom first: the root stack's, then each sheet's — each without the
    /// stack's first screen, which is its root view. Writing a path shorter pops (a swipe-back:
    /// `userDid(.back)`, for the top stack only); writing fewer paths dismisses the sheets gone
    /// (a swipe-down: one `userDid(.dismiss)` each, top first).
    public var paths: [[Screen]] {
        get { state.stacks.map { Array($0.screens.dropFirst()) } }
        set { systemChanged(paths: newValue) }
    }

    /// The root screen of each stack (what each `NavigationStack`'s root view shows).
    public var roots: [Screen?] { state.stacks.map(\.screens.first) }

    // MARK: Level by level (a sheet over a sheet)

    /// Stack `level`'s path (0: the root stack, 1: the first sheet, …), empty when there is no
    /// such stack: what each level's `NavigationStack(path:)` binds to. SwiftUI may still read
    /// a sheet's binding while it goes away; this never traps.
    public func path(at level: Int) -> [Screen] {
        let all = paths
        return all.indices.contains(level) ? all[level] : []
    }

    /// Stack `level`'s path as the system left it: shorter is a swipe-back (on the top stack;
    /// anything else is put back, as with `paths`).
    public func setPath(_ path: [Screen], at level: Int) {
        var all = paths
        guard all.indices.contains(level) else { return }
        all[level] = path
        paths = all
    }

    /// The root screen of stack `level` (nil when there is none).
    public func root(at level: Int) -> Screen? {
        let all = roots
        return all.indices.contains(level) ? all[level] : nil
    }

    /// Whether a sheet is shown over stack `level`: each level's `.sheet(isPresented:)`, so that
    /// a sheet over a sheet (the terms over a purchase presented modally) is the sheet of the
    /// level below's sheet — SwiftUI presents one sheet per view.
    public func isSheetShown(over level: Int) -> Bool { state.stacks.count > level + 1 }

    /// The system dismissed the sheet over stack `level` (a swipe-down; in SwiftUI, dismissing
    /// a sheet dismisses every sheet over it too): one `userDid(.dismiss)` per sheet gone, top
    /// first.
    public func sheetDismissed(over level: Int) {
        guard level >= 0, isSheetShown(over: level) else { return }
        paths = Array(paths.prefix(level + 1))
    }

    /// The selected tab (nil in a stack session). Writing another is a tap on the tab bar
    /// (`userDid(.selectTab)`).
    public var selectedTab: Tab? {
        get { state.selectedTab }
        set {
            guard let tab = newValue, tab != state.selectedTab else { return }
            state.apply(.selectTab(tab))
            enqueue(.select(tab))
        }
    }

    // MARK: Requests

    /// Starts a session (see `NavigationDriver.start`).
    public func start(layout: Layout = .stack, link: String? = nil) async {
        await run { (driver: NavigationDriver) throws(NavigationError) in _ = try await driver.start(layout: layout, link: link) }
    }

    /// Resumes the session the driver's store keeps; when it cannot go on (`unauthorized`,
    /// `sessionExpired`) or none is kept, starts over — in `layout` when none is kept (a tabs
    /// app passes `.tabs`), else in the kept session's (see `NavigationDriver.resume`).
    public func resume(layout: Layout = .stack) async {
        await run { (driver: NavigationDriver) throws(NavigationError) in
            do throws(NavigationError) {
                _ = try await driver.resume()
            } catch {
                switch error {
                case .unauthorized, .sessionExpired:
                    _ = try await driver.startOver(layout: layout)
                    lastEvent = .replaced(because: error)
                case .noSession: _ = try await driver.startOver(layout: layout)
                default: throw error
                }
            }
        }
    }

    /// Starts a new session in place of this one (see `NavigationDriver.startOver`).
    /// After `.expired`, this is the way on.
    public func startOver() async {
        await run { (driver: NavigationDriver) throws(NavigationError) in _ = try await driver.startOver() }
    }

    /// Sends an action the user chose (a button, a row) and returns its step — what happened
    /// (`outcome`: `purchased` or `alreadyOwned`, `signedIn` …) and, after a sign-in, the bearer
    /// token — or nil when it failed (`lastError` says why). After a `versionConflict` the state
    /// is the session as it is now (and `lastError` says it changed elsewhere).
    @discardableResult
    public func send(_ action: Action) async -> NavigationDriver.Step? {
        await settle()
        var step: NavigationDriver.Step?
        await run { (driver: NavigationDriver) throws(NavigationError) in step = try await driver.send(action) }
        lastStep = step
        if let lastError, lastError.isSessionExpired { lastEvent = .expired }
        if step == nil, case .undecodable? = lastError {
            // The answer came but could not be read: the action was most likely applied. Read
            // the session again, so that the screen and the next action's version are the
            // server's (else the next tap is a version conflict). `lastError` still says why.
            if (try? await driver.refresh()) != nil { await adoptDriver() }
        }
        return step
    }

    /// Reads the session again.
    public func refresh() async {
        await run { (driver: NavigationDriver) throws(NavigationError) in _ = try await driver.refresh() }
    }

    /// Follows the session's change feed until the calling task is cancelled: changes made on
    /// another device or by an operator show in `state` as they come. In SwiftUI,
    /// `.task { await model.follow() }` follows while the view is on screen.
    public func follow() async {
        do {
            for try await change in driver.changes() {
                feed = change.feed
                await adoptDriver()
            }
        } catch {
            let failure = NavigationError(error)
            lastError = failure
            if failure != .cancelled {
                lastEvent = failure.isSessionExpired ? .expired : .feedEnded(failure)
            }
        }
    }

    /// Waits until every gesture written into the paths has its answer (for tests and previews).
    public func settle() async {
        while let pending = gestures {
            await pending.value
            if gestures == pending { gestures = nil }
        }
    }

    // MARK: Helpers

    /// Runs `request` on the driver, then shows what the driver shows; its error is `lastError`
    /// (a conflict's state is shown too: the driver has caught up).
    private func run(_ request: (NavigationDriver) async throws(NavigationError) -> Void) async {
        do {
            try await request(driver)
            lastError = nil
        } catch {
            lastError = error
        }
        // A gesture made while the request was on its way is still to be sent: showing this
        // answer now would put back the screen the user just left (a bounce). The gesture's
        // own answer shows the navigation.
        if gestures == nil { await adoptDriver() }
    }

    /// Takes the driver's view of the navigation and the session.
    private func adoptDriver() async {
        state = await driver.shown
        session = await driver.session
    }

    /// What the system did on screen, told by the new paths: pops of the top stack, or the top
    /// sheet dismissed. Anything else (a push by the app, a change below the top) is put back.
    private func systemChanged(paths new: [[Screen]]) {
        let old = paths
        let gesture: Gesture
        if new.count < old.count, new.count >= 1, Array(old.prefix(new.count)) == new {
            // The top sheet dismissed, or a lower one with every sheet over it.
            for _ in 0..<(old.count - new.count) { state.apply(.dismiss) }
            gesture = .leave(stacks: new.count, depth: nil)
        } else if new.count == old.count, let top = old.indices.last, Array(old.prefix(top)) == Array(new.prefix(top)),
                  new[top].count < old[top].count, Array(old[top].prefix(new[top].count)) == new[top] {
            state.apply(.pop(old[top].count - new[top].count))
            gesture = .leave(stacks: new.count, depth: new[top].count + 1)  // the path and its root
        } else {
            // Not a gesture the server knows (a push by the app): show the server's navigation
            // again. `state` has not changed, and assigning it its own value notifies nobody
            // (@Observable skips equal values since Swift 6.2): the observers are told outright,
            // so that a view holding the pushed screen reads the paths again.
            _$observationRegistrar.withMutation(of: self, keyPath: \.state) {}
            return
        }
        enqueue(gesture)
    }

    /// Sends `gesture` as what the user did, after the gestures before it and once no request
    /// is in flight: as many `dismiss` and `back` as take the navigation then to where the user
    /// left it. When one is refused, the screens the server has are shown again.
    private func enqueue(_ gesture: Gesture) {
        let previous = gestures
        gesturesEnqueued += 1
        let number = gesturesEnqueued
        gestures = Task { [driver] in
            // However it ends: none pending once the last gesture has its answer (`run` shows a
            // request's answer only then).
            defer { if self.gesturesEnqueued == number { self.gestures = nil } }
            await previous?.value
            await driver.idle()
            var sent = 0
            sending: while sent < 32 {  // bounded: a server that answers a back with something else
                let shown = await driver.shown
                let action: Action
                switch gesture {
                case .select(let tab):
                    if sent > 0 { break sending }
                    action = .selectTab(tab)
                case .leave(let stacks, let depth):
                    if shown.stacks.count > stacks {
                        action = .dismiss
                    } else if let depth, shown.stacks.count == stacks, (shown.stacks.last?.screens.count ?? 0) > depth {
                        action = .back
                    } else {
                        break sending
                    }
                }
                do {
                    _ = try await driver.userDid(action)
                    self.lastError = nil
                    sent += 1
                } catch {
                    let failure = NavigationError(error)
                    self.lastError = failure
                    // A conflict has caught up already; anything else: show the server's screens.
                    if case .versionConflict = failure {} else { _ = try? await driver.refresh() }
                    break sending
                }
            }
            await self.adoptDriver()
        }
    }
}
