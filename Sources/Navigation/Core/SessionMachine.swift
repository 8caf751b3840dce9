import PhotosModel

/// The navigation core: deciding an action is a function of the session's state, the action
/// and the facts read beforehand, and returns the new state, the audit steps and the effects as
/// values. It touches no database; the coordinators of the sample run inside it.
///
/// The caller (the `Sessions` module over a database, or an in-memory harness in tests) reads
/// what `needs` names, calls `decide`, and writes the decision all or nothing — only if the
/// session is still at the version it read.
public enum SessionMachine {
    /// One action to decide.
    public struct Input: Sendable {
        /// The session.
        public var sessionID: String
        /// Its version as read.
        public var version: Int
        /// Its state as read.
        public var state: SessionState
        /// The last seq of its audit trail as read.
        public var lastSeq: Int
        /// The action.
        public var action: ClientAction
        /// Who sends it.
        public var actor: AuditActor
        /// What was read for it (`needs`).
        public var facts: SessionFacts

        /// Creates an input.
        public init(sessionID: String, version: Int, state: SessionState, lastSeq: Int, action: ClientAction, actor: AuditActor, facts: SessionFacts) {
            self.sessionID = sessionID
            self.version = version
            self.state = state
            self.lastSeq = lastSeq
            self.action = action
            self.actor = actor
            self.facts = facts
        }
    }

    // MARK: What to read

    /// What deciding `action` on `state` needs to know (nil state: a session being created;
    /// `signingIn`: the user a credential check or an operator signs in).
    public static func needs(state: SessionState?, action: ClientAction?, link: DeepLink? = nil, signingIn: Int64? = nil) -> SessionFacts.Needs {
        var photos = state?.namedPhotoIDs ?? []
        if let id = action?.photoId { photos.insert(id) }
        for candidate in [link, action?.link] { if let id = candidate?.photoID { photos.insert(id) } }
        var users = Set<Int64>()
        if let id = state?.user?.id { users.insert(id) }
        if let signingIn { users.insert(signingIn) }
        return SessionFacts.Needs(
            read: FactsWanted(photoIDs: photos, userIDs: users, purchaseLists: state?.tabs != nil || link == .purchases, tokenID: state?.tokenId),
            mayIssueToken: signingIn != nil,
            experiments: mayStartPurchaseFlow(state: state, action: action, link: link),
            credentials: state.flatMap { state in action.map { needsCredentials(state: state, action: $0) } } ?? false)
    }

    /// Whether deciding a client's `action` on `state` needs its submitted credentials checked
    /// first: a `submit` the top screen takes. The caller checks them (bcrypt, the sign-in
    /// limits) and passes the verdict in the facts (`SessionFacts.credentials`); the one rule
    /// every caller follows — the session coordinator, and the in-memory world of the tests and
    /// `FakePhotosServer`.
    public static func needsCredentials(state: SessionState, action: ClientAction) -> Bool {
        action.name == .submit && state.availableActions().contains(.submit)
    }

    /// Whether `action` (or a session created at `link`) may start a purchase flow: `buyPhoto`,
    /// `buy` on a photo's screen, a link to a purchase (`/photos/{id}/buy`).
    public static func mayStartPurchaseFlow(state: SessionState?, action: ClientAction?, link: DeepLink?) -> Bool {
        if case .buy? = link { return true }
        switch action?.name {
        case .buyPhoto?: return true
        case .openLink?: if case .buy? = action?.link { return true } else { return false }
        case .buy?: return state?.topScreen?.screen == .photo
        default: return false
        }
    }

    // MARK: Deciding

    /// Starts a new session: `[photos]` with the coordinator tree `app` (stack layout), or a
    /// tab bar with one coordinator and stack per tab; with `link`, already at that place, built
    /// as if tapped. Throws `bad_request` for a link the layout does not have and `not_found` for
    /// a photo that does not exist.
    public static func start(sessionID: String, layout: SessionLayout, link: DeepLink?, actor: AuditActor, facts: SessionFacts) throws -> SessionDecision {
        try link?.check(for: layout)
        let context = NavigationContext(state: .started(layout: layout), sessionID: sessionID, lastSeq: 0, actor: actor, facts: facts)
        context.record(.sessionStart, coordinator: nil, detail: layout == .stack ? [:] : ["layout": .string(layout.rawValue)])
        context.record(.coordinatorStart, coordinator: "app", detail: ["id": "app", "kind": "app"])
        let app = AppCoordinator(model: CoordinatorState(id: "app", role: .app), path: "app", context: context)
        app.start()
        if let link { try app.open(link) }
        return try finish(context, before: nil, version: 0, verdict: .accepted)
    }

    /// Decides one client action. Throws for what changes nothing (`bad_request`, `not_found`,
    /// `CredentialsNotChecked`); a refusal that is recorded (`action_not_available`,
    /// `invalid_credentials`, `too_many_attempts`) is a decision with `result.error` set.
    public static func decide(_ input: Input) throws -> SessionDecision {
        let action = input.action
        let (context, tree) = try restore(input)
        let allowed = context.state.availableActions()
        // A link comes from outside the screens: accepted on every one, listed on none.
        guard let top = context.state.topScreen, allowed.contains(action.name) || action.name == .openLink else {
            context.record(.actionRejected, coordinator: nil, detail: action.auditDetail)
            return try finish(context, before: input.state, version: input.version, verdict: .rejected(allowed))
        }
        if action.name == .submit {
            // The caller asked `needsCredentials` and checked them; deciding without is a bug.
            guard input.facts.credentials != nil else { throw CredentialsNotChecked() }
        } else {
            try action.validateParameters()
        }
        guard let app = tree as? AppCoordinator else {
            throw SessionStateError(sessionID: input.sessionID, problem: "the root coordinator is not app")
        }
        if action.name == .openLink, let link = action.link {
            try link.check(for: context.state.sessionLayout)
            try app.open(link)  // recorded as link.open, not as an action
            return try finish(context, before: input.state, version: input.version, verdict: .accepted)
        }
        let coordinators = Dictionary(uniqueKeysWithValues: tree.subtree.map { ($0.id, $0) })
        guard let owner = coordinators[top.owner] else {
            throw SessionStateError(sessionID: input.sessionID, problem: "no coordinator \(top.owner) owns the top screen")
        }
        // The tab bar is the app coordinator's; every other action goes to the top screen's owner.
        context.record(.action, coordinator: action.name == .selectTab ? app.path : owner.path, detail: action.auditDetail)
        switch action.name {
        case .back:
            context.pop(by: owner.path)
            tree.finishDescendantsWithoutScreens(reason: .back)
        case .selectTab:
            if let tab = action.tab { app.selectTab(tab) }
        case .dismiss:
            let presenter = context.state.stacks.last?.presenter ?? "app"
            // Dismissing a flow's stack finishes the flow; the app's or a tab's own modal
            // sign-in is just dismissed (they run for the whole session).
            if let coordinator = coordinators[presenter], !(coordinator is ContentCoordinator) {
                coordinator.finish(.dismissed)
            } else {
                context.dismiss(downTo: context.state.stacks.count - 1, by: owner.path)
            }
        default:
            try owner.handle(action, on: top)
        }
        return try finish(context, before: input.state, version: input.version, verdict: .accepted)
    }

    /// Signs a live session in as `user` on an operator's authority (`input.action` is ignored).
    /// If the session waits on a `signIn` screen, its flow resumes exactly as after a successful
    /// `submit`. Throws `conflict` when it is signed in already.
    public static func operatorSignIn(_ input: Input, user: User) throws -> SessionDecision {
        if let current = input.state.user {
            throw PhotosError(.conflict, "session \(input.sessionID) is already signed in as \(current.username)")
        }
        var input = input
        input.facts.credentials = .valid(user)
        if input.state.availableActions().contains(.submit) {
            input.action = ClientAction(.submit, username: user.username)
            return try decide(input)
        }
        let (context, _) = try restore(input)
        try context.signIn(user)
        return try finish(context, before: input.state, version: input.version, verdict: .accepted)
    }

    /// Completes the `buy` screen of a live session on an operator's authority, as the client's
    /// `buy` would (`input.action` is ignored). Throws `action_not_available`, recording
    /// nothing, when the top screen is not `buy`: an operator completes only a purchase the
    /// person started.
    public static func operatorPurchase(_ input: Input) throws -> SessionDecision {
        guard let top = input.state.topScreen, top.screen == .buy else {
            throw PhotosError(.actionNotAvailable, "session \(input.sessionID) is on the \(input.state.topScreen?.screen.rawValue ?? "no") screen, not buy")
        }
        var input = input
        input.action = ClientAction(.buy)
        return try decide(input)
    }

    /// Signs a live session out on an operator's authority, revoking its token (`input.action` is
    /// ignored); the screens stay where they are, as after the photos list's `signOut`. A session
    /// that is signed out already (or whose token died, which `restore` signs out) is left as it
    /// is, with no step.
    public static func operatorSignOut(_ input: Input, reason: String) throws -> SessionDecision {
        let (context, _) = try restore(input)
        if context.state.user != nil {
            context.signOut(reason: reason, actor: input.actor)
        }
        return try finish(context, before: input.state, version: input.version, verdict: .accepted)
    }

    /// Ends a session idle since `idleSince`: a `session.expired` step by the system, its token
    /// revoked, and (`ended`) its state dropped by the write. Every later request on it is
    /// answered `410 session_expired`; its audit trail stays.
    /// (No action is decided: the session at `version` with `state` and its trail at `lastSeq`
    /// just ends, stamped `now`.)
    public static func expire(sessionID: String, version: Int, state: SessionState, lastSeq: Int, now: String, idleSince: String) throws -> SessionDecision {
        let context = NavigationContext(state: state, sessionID: sessionID, lastSeq: lastSeq, actor: .system, facts: SessionFacts(now: now))
        guard state.coordinators != nil else {
            throw SessionStateError(sessionID: sessionID, problem: "no coordinator tree")
        }
        context.expire(idleSince: idleSince)
        var decision = try finish(context, before: state, version: version, verdict: .accepted)
        decision.ended = true
        return decision
    }

    /// The session as the API shows it, from its state and the facts read for it.
    public static func view(id: String, version: Int, state: SessionState, facts: SessionFacts) -> SessionView {
        guard let user = state.user else { return SessionView(id: id, version: version, state: state, owned: [], purchases: []) }
        return SessionView(
            id: id, version: version, state: state, owned: facts.owned[user.id] ?? [],
            purchases: facts.purchased[user.id] ?? [])
    }

    // MARK: Inside

    enum Verdict { case accepted, rejected([ActionName]) }

    /// The context and coordinator tree for `input`; a session whose token is no longer live is
    /// signed out first (by the system).
    private static func restore(_ input: Input) throws -> (NavigationContext, Coordinator) {
        let context = NavigationContext(state: input.state, sessionID: input.sessionID, lastSeq: input.lastSeq, actor: input.actor, facts: input.facts)
        if context.state.tokenId != nil, !input.facts.tokenLive {
            context.signOut(reason: "tokenInvalid", actor: .system)
        }
        guard let treeState = context.state.coordinators else {
            throw SessionStateError(sessionID: input.sessionID, problem: "no coordinator tree")
        }
        return (context, Coordinator.restore(treeState, context: context))
    }

    /// The decision: the tree saved into the state, the version moved on when anything changed
    /// or the action was accepted, the steps numbered and stamped, the answer.
    private static func finish(_ context: NavigationContext, before: SessionState?, version: Int, verdict: Verdict) throws -> SessionDecision {
        if let inapplicable = context.inapplicable {
            throw SessionStateError(sessionID: context.sessionID, problem: "a step the state cannot take: \(inapplicable.message)")
        }
        var state = context.state
        state.refreshTop()
        let accepted: Bool
        if case .accepted = verdict { accepted = true } else { accepted = false }
        let changed = state != before || accepted
        let newVersion = changed ? version + 1 : version
        let records = context.steps.enumerated().map { offset, entry in
            AuditRecord(entry, sessionID: context.sessionID, seq: context.firstSeq + offset, at: context.facts.now)
        }
        var error: ActionError?
        if case .rejected(let allowed) = verdict {
            error = ActionError(code: .actionNotAvailable, message: "the \(before?.topScreen?.screen.rawValue ?? "current") screen does not offer this action", allowed: allowed)
        } else if let reported = context.reportedError {
            error = ActionError(code: reported.code, message: reported.message, allowed: nil)
        }
        let result = ActionResult(
            session: view(id: context.sessionID, version: newVersion, state: state, facts: context.facts),
            events: records.map { record in
                record.row(username: [before?.user, state.user].lazy.compactMap { $0 }.first { $0.id == record.userID }?.username)
            }, outcome: error?.code == .actionNotAvailable ? .rejected : context.outcome,
            token: context.issuedToken, error: error)
        return SessionDecision(version: newVersion, changed: changed, state: state, records: records, effects: context.effects, result: result)
    }
}

/// What deciding one action (or starting a session) came to: write it all, or none of it.
public struct SessionDecision: Sendable {
    /// The session's version after it (the one read when nothing changed).
    public var version: Int
    /// True when the session row is to be saved (state or version changed).
    public var changed: Bool
    /// The new state.
    public var state: SessionState
    /// The audit rows, numbered from the trail's last seq + 1 and stamped with the facts' time.
    public var records: [AuditRecord]
    /// What else to write with them.
    public var effects: [SessionEffect]
    /// The answer to the client.
    public var result: ActionResult
    /// True when the session ends with this write (`expire`): its state is dropped.
    public var ended = false
}

/// Thrown by `decide` for a `submit` whose credentials the caller did not check although
/// `needsCredentials` says they must be: a caller's bug, never a path of the action loop (which
/// asks `needsCredentials` on the state it decides on), so it ends as `500 internal`.
public struct CredentialsNotChecked: Error {
    public init() {}
}

/// A session whose stored state cannot be used (edited by hand, or written by a newer
/// version). Not a `PhotosError`: the server logs it and answers `500 internal`, never
/// showing the details (which may quote the decoder) to the client.
public struct SessionStateError: Error, CustomStringConvertible {
    /// The session.
    public let sessionID: String
    /// What is wrong with it.
    public let problem: String
    /// For the log: the session by its digest only (its id is a credential).
    public var description: String { "session \(SessionIDs.logForm(sessionID)) has an inconsistent state: \(problem)" }

    /// Creates the error.
    public init(sessionID: String, problem: String) {
        self.sessionID = sessionID
        self.problem = problem
    }
}
