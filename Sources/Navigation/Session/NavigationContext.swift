import PhotosModel

/// What the coordinators of one session work with while one action is decided: the navigator
/// (the stacks), the audit recorder, the signed-in user, the facts read beforehand, and the
/// effects they ask for. Pure: it touches no database; `SessionMachine` turns what it gathered
/// into a `SessionDecision`.
///
/// The state changes only by steps: every method below records a step, and `record` applies
/// it with `SessionState.apply`, the interpreter the replay folds over the trail.
final class NavigationContext {
    /// The session's state, as the steps recorded so far left it.
    private(set) var state: SessionState
    /// The session (its trail's id).
    let sessionID: String
    /// Who acts.
    let actor: AuditActor
    /// What was read before deciding; updated by what this action does (a purchase is owned).
    private(set) var facts: SessionFacts
    /// The steps recorded so far, in order; the first gets `firstSeq`.
    private(set) var steps: [AuditEntry] = []
    /// The seq of the first step of this action (the trail's last seq + 1).
    let firstSeq: Int
    /// What the action asks the world to do.
    private(set) var effects: [SessionEffect] = []
    /// What the action achieved, for the response.
    var outcome: ActionOutcome = .navigated
    /// A token issued by this action (shown once).
    private(set) var issuedToken: String?
    /// An error to report after committing (a failed sign-in is recorded, then refused).
    private(set) var reportedError: PhotosError?
    /// The first step the state could not take (a fault of the core: the decision is refused).
    private(set) var inapplicable: StepNotApplicable?

    init(state: SessionState, sessionID: String, lastSeq: Int, actor: AuditActor, facts: SessionFacts) {
        self.state = state
        self.sessionID = sessionID
        self.firstSeq = lastSeq + 1
        self.actor = actor
        self.facts = facts
    }

    /// The result of the credential check made beforehand.
    var credentialCheck: CredentialCheck? { facts.credentials }

    // MARK: Audit

    /// Records one step and applies it to the state. The row names the user the step concerns:
    /// the signed-in user after it, or before it when it signed them out. Returns its seq.
    @discardableResult
    func record(
        _ step: AuditStep, coordinator: String?, screen: ScreenKind? = nil, detail: JSONObject = [:], actor: AuditActor? = nil, username: String? = nil
    ) -> Int {
        let before = state.user?.id
        do {
            // Only the steps whose detail the interpreter reads have it read (not an action's).
            let read = NavigationStep.readsDetail(step) && !detail.isEmpty ? NavigationStep.Detail(detail) : NavigationStep.Detail()
            try state.apply(NavigationStep(step: step, coordinator: coordinator, screen: screen, detail: read, username: username))
        } catch let error as StepNotApplicable {
            inapplicable = inapplicable ?? error
        } catch {
            inapplicable = inapplicable ?? StepNotApplicable(message: "\(error)")
        }
        steps.append(AuditEntry(
            actor: actor ?? self.actor, userID: state.user?.id ?? before,
            coordinator: coordinator, step: step, screen: screen?.rawValue, detail: detail))
        return firstSeq + steps.count - 1
    }

    /// The seq the next recorded step will get (coordinator ids are derived from it).
    var upcomingSeq: Int { firstSeq + steps.count }

    // MARK: Navigator

    private func params(_ screen: ScreenState) -> JSONObject {
        screen.photoId.map { ["photoId": .int($0)] } ?? [:]
    }

    /// Pushes `screen` onto the top stack (horizontal), owned by the coordinator at `path`.
    func push(_ screen: ScreenState, by path: String) {
        record(.screenPush, coordinator: path, screen: screen.screen, detail: params(screen))
    }

    /// Pops the top screen of the top stack.
    func pop(by path: String) {
        guard let popped = state.stacks.last?.screens.last else { return }
        record(.screenPop, coordinator: path, screen: popped.screen, detail: params(popped))
    }

    /// Pops stack `index` — the top stack — down to `depth` screens, one `screen.pop` per
    /// screen, top first.
    func pop(stack index: Int, toDepth depth: Int, by path: String) {
        while index == state.stacks.count - 1, state.stacks[index].screens.count > max(depth, 1), let popped = state.stacks[index].screens.last {
            record(.screenPop, coordinator: path, screen: popped.screen, detail: params(popped))
        }
    }

    /// Replaces the top screen of the top stack (recorded as pop then push).
    func replaceTop(with screen: ScreenState, by path: String) {
        pop(by: path)
        push(screen, by: path)
    }

    /// Presents a new modal stack with `screen` as its root (vertical), presented and owned by
    /// the coordinator at `path`.
    func present(_ screen: ScreenState, by path: String) {
        record(.screenPresent, coordinator: path, screen: screen.screen, detail: params(screen))
    }

    /// Dismisses modal stacks from the top down to and including stack `index`.
    func dismiss(downTo index: Int, by path: String) {
        while state.stacks.count > max(index, 1), let stack = state.stacks.last {
            let before = state.stacks.count
            record(.screenDismiss, coordinator: path, screen: stack.screens.first?.screen)
            if state.stacks.count == before { return }  // not applied (recorded as inapplicable)
        }
    }

    // MARK: Tabs

    /// Runs `body` with the parked `tab`'s stack shown in place of the selected one, so that
    /// the tab's coordinators, which see their stack as `stacks[0]`, can start or unwind while
    /// it is not selected. Nothing is recorded for the swap itself: the steps `body` records
    /// carry the coordinator's path, which names its tab (`SessionReplay` does the same swap).
    func onTab<T>(_ tab: TabName?, _ body: () throws -> T) rethrows -> T {
        // (The one place the context changes the state without a step: the swap is a view.)
        let scope = state.enterTab(tab)
        defer { state.leaveTab(scope) }
        return try body()
    }

    /// Shows `tab` (recorded as `tab.select` by the tab's coordinator). The selected tab's
    /// stack is parked exactly as it is.
    func selectTab(_ tab: TabName, by path: String) {
        record(.tabSelect, coordinator: path, detail: ["tab": .string(tab.rawValue)])
    }

    // MARK: Facts and effects

    /// Signs the session in as `user` with the token chosen beforehand (returned to the client
    /// once), audited.
    func signIn(_ user: User) throws {
        guard let grant = facts.newToken else {
            throw SessionStateError(sessionID: sessionID, problem: "a sign-in without a token chosen for it")
        }
        effects.append(.issueToken(grant, userID: user.id))
        issuedToken = grant.token
        record(.authSignIn, coordinator: nil, detail: ["userId": .int(user.id), "tokenId": .int(grant.id)], username: user.username)
        outcome = .signedIn
    }

    /// Records a refused sign-in; the action is answered with `401 invalid_credentials`, or
    /// `429 too_many_attempts` when the sign-in limits refused to check the password.
    func signInFailed() {
        var limit: PhotosError?
        var knownUser: Int64?
        var limitDetail: JSONObject = [:]
        switch credentialCheck {
        case .limited(let error, let existing, let detail)?: (limit, knownUser, limitDetail) = (error, existing, detail)
        case .invalid(let existing)?: knownUser = existing
        case .valid, nil: break
        }
        record(.authSignInFailed, coordinator: nil, detail: Credentials.refusedSignInDetail(
            knownUserID: knownUser, reason: limit == nil ? nil : "tooManyAttempts", limit: limitDetail))
        outcome = .signInFailed
        reportedError = limit ?? .invalidCredentials
    }

    /// Signs the session out and revokes its token.
    func signOut(reason: String, actor: AuditActor? = nil) {
        if let tokenId = state.tokenId {
            effects.append(.revokeToken(id: tokenId))
        }
        record(.authSignOut, coordinator: nil, detail: ["reason": .string(reason)], actor: actor)
        outcome = .signedOut
    }

    /// Ends the session (idle too long): its token revoked, a `session.expired` step by the
    /// system saying since when it was idle.
    func expire(idleSince: String) {
        if let tokenId = state.tokenId {
            effects.append(.revokeToken(id: tokenId))
        }
        record(.sessionExpired, coordinator: nil, detail: ["idleSince": .string(idleSince)], actor: .system)
    }

    // MARK: Experiments

    /// A variation point a purchase flow took under a running experiment: to be recorded as
    /// `experiment.exposed` once the flow has started.
    struct Exposure {
        let point: VariationPoint
        let experiment: String
        let variant: String
    }

    /// The values a purchase flow starting now takes of `points`, for those an experiment
    /// governs (the others keep their defaults and are not stored), and the exposures to
    /// record. The subject is the signed-in user, else the session: a user gets the same variant
    /// on every device and every instance.
    func take(_ points: [VariationPoint]) -> (values: [String: String], exposures: [Exposure]) {
        var values: [String: String] = [:]
        var exposures: [Exposure] = []
        let subject = state.user.map { "user:\($0.id)" } ?? "session:\(sessionID)"
        for point in points {
            guard let experiment = facts.experiments[point] else { continue }
            let value = experiment.value(for: subject)
            values[point.rawValue] = value
            if experiment.running { exposures.append(Exposure(point: point, experiment: experiment.name, variant: value)) }
        }
        return (values, exposures)
    }

    /// Records that the flow at `path` took `exposure`'s variant, and lists the experiment on
    /// the session (once per experiment and variant).
    func recordExposure(_ exposure: Exposure, by path: String) {
        record(.experimentExposed, coordinator: path, detail: [
            "experiment": .string(exposure.experiment), "point": .string(exposure.point.rawValue), "variant": .string(exposure.variant),
        ])
    }

    /// `photoId` if that photo exists, else `not_found`.
    func existingPhoto(_ photoId: Int64?) throws -> Int64 {
        guard let photoId, facts.photos[photoId] != nil else {
            throw PhotosError.notFound("no photo with id \(photoId ?? 0)")
        }
        return photoId
    }

    /// True when the signed-in user owns `photoId`.
    func owns(_ photoId: Int64) -> Bool {
        guard let user = state.user else { return false }
        return facts.owned[user.id]?.contains(photoId) ?? false
    }

    /// `user` buys `photoId` at its price now: a purchase effect, and from now on the photo is
    /// owned (and first on the `purchases` screen). Returns nil when it was owned already
    /// (nothing is bought twice), else the price. Throws `not_found` for a missing photo.
    func buy(_ photoId: Int64, by user: SessionUser) throws -> Int? {
        guard let photo = facts.photos[photoId] else { throw PhotosError.notFound("no photo with id \(photoId)") }
        if facts.owned[user.id]?.contains(photoId) ?? false { return nil }
        effects.append(.purchase(userID: user.id, photoID: photoId, priceCents: photo.priceCents))
        facts.owned[user.id, default: []].insert(photoId)
        facts.purchased[user.id]?.insert(photo, at: 0)
        return photo.priceCents
    }
}

/// What an action achieved (the response's `outcome`).
public enum ActionOutcome: String, Codable, Sendable, CaseIterable {
    case navigated, signedIn, signInFailed, signedOut, purchased, alreadyOwned, rejected
}
