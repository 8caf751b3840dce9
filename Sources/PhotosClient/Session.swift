/// A session as the server last described it, in this client's terms.
public struct Session: Hashable, Sendable {
    /// The session's id (with its secret, what `NavigationDriver.attach` takes).
    public var id: String
    /// Its version: every change the server makes to it counts one.
    public var version: Int
    /// The signed-in user, if any.
    public var user: User?
    /// Stack or tabs.
    public var layout: Layout
    /// What the user sees, per container: the root stack (or the selected tab's, and every
    /// tab's as it was left), then the modal stacks over it.
    public var navigation: NavigationState
    /// The actions the top screen offers that this client knows, in the server's order. An
    /// action a newer server added is never here (it is in `generated.top`).
    public var actions: [ActionName]
    /// The flow experiments the session was exposed to, in order: what an app tags its own
    /// analytics with.
    public var experiments: [Experiment]
    /// The answer as decoded, for what this type does not carry (the coordinator tree).
    public var generated: Components.Schemas.Session

    /// A flow experiment and the variant the session took.
    public struct Experiment: Hashable, Sendable {
        public var name: String
        public var variant: String
    }

    /// The screen on top of everything.
    public var top: Screen? { navigation.top }

    /// The session a decoded answer describes.
    public init(_ generated: Components.Schemas.Session) {
        id = generated.id
        version = generated.version
        user = generated.user?.value1
        layout = Layout(generated.layout)
        navigation = NavigationState(generated)
        actions = generated.top.actions.map(ActionName.init).filter(\.isKnown)
        experiments = generated.experiments.map { Experiment(name: $0.name, variant: $0.variant) }
        self.generated = generated
    }
}

/// A session is kept (by a `SessionStore`) as the server described it: the answer's own JSON.
extension Session: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(try Components.Schemas.Session(from: decoder))
    }

    public func encode(to encoder: any Encoder) throws {
        try generated.encode(to: encoder)
    }
}
