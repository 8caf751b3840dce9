import Foundation
import PhotosModel

/// One recorded step as the interpreter reads it: what an audit row says (its step, the
/// coordinator that took it, the screen, the detail), and for a sign-in the name the state shows.
///
/// The navigation core builds one for every step it records and applies it at once
/// (`NavigationContext.record`); the replay builds one from every audit row
/// (`SessionReplay.state(from:)`). Both then call the same `SessionState.apply`, so the state a
/// session is saved with and the state its trail replays to cannot drift apart.
public struct NavigationStep: Sendable {
    /// The step.
    public var step: AuditStep
    /// The coordinator's path (`app/buy`), nil for a session's own steps.
    public var coordinator: String?
    /// The screen pushed, popped, presented or dismissed.
    public var screen: ScreenKind?
    /// What the row's detail says that the state keeps.
    public var detail: Detail
    /// The signed-in name an `auth.signIn` shows (an erased user's rows hold none: the state
    /// shows the tombstone `users` keeps).
    public var username: String?

    /// Creates a step.
    public init(step: AuditStep, coordinator: String?, screen: ScreenKind?, detail: Detail, username: String?) {
        self.step = step
        self.coordinator = coordinator
        self.screen = screen
        self.detail = detail
        self.username = username
    }

    /// Whether `apply` reads the detail of `step` (the others' details change no state).
    public static func readsDetail(_ step: AuditStep) -> Bool {
        switch step {
        case .sessionStart, .tabSelect, .coordinatorStart, .screenPush, .screenPresent, .authSignIn, .experimentExposed: true
        case .coordinatorFinish, .screenPop, .screenDismiss, .authSignOut, .sessionExpired, .action, .actionRejected, .authSignInFailed,
             .purchaseCompleted, .linkOpen, .userCreated, .photoAdded, .operatorCreated, .operatorRemoved, .userErased, .experimentAdded,
             .experimentStopped:
            false
        }
    }

    /// The members of a step's detail that change a state.
    public struct Detail: Decodable, Sendable {
        var id: String?
        var kind: CoordinatorKind?
        var presentation: FlowPresentation?
        var photoId: Int64?
        var userId: Int64?
        var tokenId: Int64?
        var tab: TabName?
        var layout: SessionLayout?
        var experiment: String?
        var variant: String?
        /// The variation points' values a buy coordinator's `coordinator.start` names
        /// (`"terms.required": "yes"`), by point.
        var variants: [String: String]?

        /// A detail with nothing in it (a row whose detail is not an object).
        public init() {}

        /// The detail a step is recorded with.
        public init(_ object: JSONObject) {
            self.init { object[$0] }
        }

        /// The detail of an audit row, from its text: each member read as the recorded object
        /// holds it (a member of another type reads as absent, as in `init(_:)`).
        public init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: MemberKey.self)
            self.init { name in
                let key = MemberKey(name)
                if let text = try? container.decodeIfPresent(String.self, forKey: key) { return .string(text) }
                if let number = try? container.decodeIfPresent(Int64.self, forKey: key) { return .int(number) }
                return nil
            }
        }

        /// The one reading of a detail, whatever holds it: `member` gives a member by name.
        private init(member: (String) -> JSONValue?) {
            func string(_ name: String) -> String? {
                if case .string(let value)? = member(name) { value } else { nil }
            }
            func int(_ name: String) -> Int64? {
                if case .int(let value)? = member(name) { value } else { nil }
            }
            id = string("id")
            kind = string("kind").flatMap(CoordinatorKind.init(rawValue:))
            presentation = string("presentation").flatMap(FlowPresentation.init(rawValue:))
            photoId = int("photoId")
            userId = int("userId")
            tokenId = int("tokenId")
            tab = string("tab").flatMap(TabName.init(rawValue:))
            layout = string("layout").flatMap(SessionLayout.init(rawValue:))
            experiment = string("experiment")
            variant = string("variant")
            variants = Self.variants { point in string(point.rawValue) }
        }

        /// The values `value` finds, by point; nil when it finds none. Every point is read:
        /// a new point is a case of `VariationPoint` and nothing here.
        private static func variants(_ value: (VariationPoint) -> String?) -> [String: String]? {
            var values: [String: String] = [:]
            for point in VariationPoint.allCases { if let found = value(point) { values[point.rawValue] = found } }
            return values.isEmpty ? nil : values
        }

        private struct MemberKey: CodingKey {
            var stringValue: String
            var intValue: Int? { nil }
            init(_ name: String) { stringValue = name }
            init?(stringValue: String) { self.stringValue = stringValue }
            init?(intValue: Int) { nil }
        }
    }
}

/// A step the state cannot follow (the trail was edited, or a step was recorded out of order).
public struct StepNotApplicable: Error, CustomStringConvertible, Equatable {
    /// What is wrong.
    public let message: String
    public var description: String { message }
}
