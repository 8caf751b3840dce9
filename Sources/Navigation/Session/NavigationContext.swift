import PhotosCore
import SQLiteStore

/// What the coordinators of one session work with while one action runs: the navigator (the
/// stacks), the audit recorder, the signed-in user, and the services they may call — all inside
/// the session coordinator's write transaction.
final class NavigationContext {
    /// The session's state, mutated in place.
    var state: SessionState
    /// The session's trail: every step is recorded there, and numbered there.
    let trail: AuditTrailWriter
    var sessionID: String { trail.sessionID }
    let actor: AuditActor
    let connection: any DatabaseConnection
    let services: SessionServices
    /// The result of checking the submitted credentials before the transaction (bcrypt).
    let credentialCheck: CredentialCheck?
    /// What the action achieved, for the response.
    var outcome: ActionOutcome = .navigated
    /// A token issued by this action (shown once).
    var issuedToken: String?
    /// An error to report after committing (a failed sign-in is recorded, then refused).
    var reportedError: PhotosError?

    init(state: SessionState, trail: AuditTrailWriter, actor: AuditActor, connection: any DatabaseConnection, services: SessionServices, credentialCheck: CredentialCheck?) {
        self.state = state
        self.trail = trail
        self.actor = actor
        self.connection = connection
        self.services = services
        self.credentialCheck = credentialCheck
    }

    // MARK: Audit

    /// Records one step, stamped with the signed-in user as it is now. Returns its seq.
    @discardableResult
    func record(_ step: AuditStep, coordinator: String?, screen: ScreenKind? = nil, detail: JSONObject = [:], actor: AuditActor? = nil) -> Int {
        trail.record(AuditEntry(
            actor: actor ?? self.actor, userID: state.user?.id, username: state.user?.username,
            coordinator: coordinator, step: step, screen: screen?.rawValue, detail: detail))
    }

    /// The seq the next recorded step will get (coordinator ids are derived from it).
    var upcomingSeq: Int { trail.nextSeq }

    // MARK: Navigator

    private func params(_ screen: ScreenState) -> JSONObject {
        screen.photoId.map { ["photoId": .int($0)] } ?? [:]
    }

    /// Pushes `screen` onto the top stack (horizontal).
    func push(_ screen: ScreenState, by path: String) {
        if state.stacks.isEmpty {
            state.stacks.append(StackState(presentation: .root, presenter: screen.owner, screens: []))
        }
        state.stacks[state.stacks.count - 1].screens.append(screen)
        record(.screenPush, coordinator: path, screen: screen.screen, detail: params(screen))
    }

    /// Pops the top screen of the top stack.
    func pop(by path: String) {
        guard let popped = state.stacks[state.stacks.count - 1].screens.popLast() else { return }
        record(.screenPop, coordinator: path, screen: popped.screen, detail: params(popped))
    }

    /// Pops stack `index` down to `depth` screens, one `screen.pop` per screen, top first.
    func pop(stack index: Int, toDepth depth: Int, by path: String) {
        while state.stacks[index].screens.count > max(depth, 1) {
            let popped = state.stacks[index].screens.removeLast()
            record(.screenPop, coordinator: path, screen: popped.screen, detail: params(popped))
        }
    }

    /// Replaces the top screen of the top stack (recorded as pop then push).
    func replaceTop(with screen: ScreenState, by path: String) {
        pop(by: path)
        push(screen, by: path)
    }

    /// Presents a new modal stack with `screen` as its root (vertical). Returns the stack's index.
    @discardableResult
    func present(_ screen: ScreenState, by path: String, presenter: String) -> Int {
        state.stacks.append(StackState(presentation: .modal, presenter: presenter, screens: [screen]))
        record(.screenPresent, coordinator: path, screen: screen.screen, detail: params(screen))
        return state.stacks.count - 1
    }

    /// Dismisses modal stacks from the top down to and including stack `index`.
    func dismiss(downTo index: Int, by path: String) {
        while state.stacks.count > max(index, 1) {
            let stack = state.stacks.removeLast()
            record(.screenDismiss, coordinator: path, screen: stack.screens.first?.screen)
        }
    }

    // MARK: Tabs

    /// Runs `body` with the parked `tab`'s stack shown in place of the selected one, so that
    /// the tab's coordinators, which see their stack as `stacks[0]`, can start or unwind while
    /// it is not selected. Nothing is recorded for the swap itself: the steps `body` records
    /// carry the coordinator's path, which names its tab (`SessionReplay` does the same swap).
    func onTab<T>(_ tab: TabName?, _ body: () throws -> T) rethrows -> T {
        let scope = state.enterTab(tab)
        defer { state.leaveTab(scope) }
        return try body()
    }

    /// Shows `tab` (recorded as `tab.select` by the tab's coordinator). The selected tab's
    /// stack is parked exactly as it is.
    func selectTab(_ tab: TabName, by path: String) {
        state.showTab(tab)
        record(.tabSelect, coordinator: path, detail: ["tab": .string(tab.rawValue)])
    }

    // MARK: Services

    /// Signs the session in as `user`: a new token (returned to the client once), audited.
    func signIn(_ user: User) throws {
        let (tokenId, issued) = try services.auth.issueToken(for: user.id, on: connection)
        state.user = SessionUser(id: user.id, username: user.username)
        state.tokenId = tokenId
        issuedToken = issued.token
        record(.authSignIn, coordinator: nil, detail: ["userId": .int(user.id), "tokenId": .int(tokenId)])
        outcome = .signedIn
    }

    /// Records a refused sign-in; the action is answered with `401 invalid_credentials`, or
    /// `429 too_many_attempts` when the sign-in limits refused to check the password.
    func signInFailed() {
        var limit: PhotosError?
        var knownUser: String?
        switch credentialCheck {
        case .limited(let error, let existing)?: (limit, knownUser) = (error, existing)
        case .invalid(let existing)?: knownUser = existing
        case .valid, nil: break
        }
        record(.authSignInFailed, coordinator: nil, detail: AuthService.refusedSignInDetail(knownUsername: knownUser, reason: limit == nil ? nil : "tooManyAttempts"))
        outcome = .signInFailed
        reportedError = limit ?? .invalidCredentials
    }

    /// Signs the session out and revokes its token.
    func signOut(reason: String, actor: AuditActor? = nil) throws {
        if let tokenId = state.tokenId {
            try services.auth.revoke(tokenID: tokenId, on: connection)
        }
        record(.authSignOut, coordinator: nil, detail: ["reason": .string(reason)], actor: actor)
        state.user = nil
        state.tokenId = nil
        outcome = .signedOut
    }
}

/// The services the coordinators call.
public struct SessionServices: Sendable {
    /// Tokens and users.
    public let auth: AuthService

    /// Creates the services.
    public init(auth: AuthService) {
        self.auth = auth
    }
}

/// What checking submitted credentials found (done before the write transaction: bcrypt is slow).
enum CredentialCheck: Sendable, Equatable {
    /// The password matched.
    case valid(User)
    /// It did not; `existingUser` is the submitted username when a user has it (nil for an
    /// unknown name, which is never recorded: it may be a password typed into the wrong field).
    case invalid(existingUser: String?)
    /// The sign-in limits refused to check it (`too_many_attempts`).
    case limited(PhotosError, existingUser: String?)
}

/// What an action achieved (the response's `outcome`).
public enum ActionOutcome: String, Codable, Sendable, CaseIterable {
    case navigated, signedIn, signInFailed, signedOut, purchased, alreadyOwned, rejected
}
