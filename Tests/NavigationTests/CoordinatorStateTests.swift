import Foundation
import Navigation
import PhotosModel
import Testing

/// `CoordinatorState` is an enum of roles in memory and the same JSON object as ever in
/// `sessions.state`: trees as earlier versions stored them read into the right roles and write
/// back byte for byte, by `Codable` and by the hand-written writer alike.
@Suite("CoordinatorState")
struct CoordinatorStateTests {
    /// Stored trees: a push flow with an experiment's values and its terms seen; a tab bar with
    /// a modal flow and its terms sheet.
    static let stored = [
        #"{"children":[{"children":[],"id":"buy-3","initialDepth":2,"kind":"buy","photoId":2,"presentation":"push","stackIndex":0,"termsSeen":true,"variants":{"signIn.when":"atPurchase","terms.required":"yes"}}],"id":"app","kind":"app"}"#,
        #"{"children":[{"children":[],"id":"tab-photos","kind":"tab","tab":"photos"},{"children":[{"children":[{"children":[],"id":"terms-9","kind":"terms","stackIndex":2}],"id":"buy-5","kind":"buy","photoId":4,"presentation":"modal","stackIndex":1}],"id":"tab-purchases","kind":"tab","tab":"purchases"}],"id":"app","kind":"app"}"#,
    ]

    /// Trees from before every coordinator kept where it began: a sheet with its terms over it,
    /// and a push flow on the root stack.
    static let legacy = [
        #"{"children":[{"children":[{"children":[],"id":"terms-4","kind":"terms"}],"id":"buy-2","kind":"buy","photoId":1,"presentation":"modal"}],"id":"app","kind":"app"}"#,
        #"{"children":[{"children":[],"id":"buy-3","kind":"buy","photoId":1,"presentation":"push"}],"id":"app","kind":"app"}"#,
    ]

    @Test("stored trees read into roles and write back byte for byte (the state's writer)", arguments: stored)
    func roundTrip(text: String) throws {
        let tree = try JSONDecoder().decode(CoordinatorState.self, from: Data(text.utf8))
        var state = SessionState.empty
        state.coordinators = tree
        #expect(state.jsonText.contains(#""coordinators":"# + text), "\(state.jsonText)")
        #expect(tree.kind == .app && tree.role == .app)
    }

    @Test("each kind carries its own: a tab its tab, a flow its presentation, photo, start and values, the terms their stack")
    func roles() throws {
        let push = try JSONDecoder().decode(CoordinatorState.self, from: Data(Self.stored[0].utf8)).children[0]
        let flow = try #require(push.flow)
        #expect(push.kind == .buy && flow.presentation == .push && flow.photoId == 2 && flow.stackIndex == 0 && flow.initialDepth == 2)
        #expect(flow.termsSeen && flow.value(TermsRequired.self) == .yes && flow.value(SignInWhen.self) == .atPurchase)
        let tabs = try JSONDecoder().decode(CoordinatorState.self, from: Data(Self.stored[1].utf8))
        #expect(tabs.children.map(\.tab) == [.photos, .purchases])
        let modal = tabs.children[1].children[0]
        #expect(modal.flow?.presentation == .modal && modal.flow?.initialDepth == 0 && modal.children[0].role == .terms(stackIndex: 2))
        #expect(modal.flow?.termsSeen == false && modal.flow?.variants == [:])
        // Only a flow has a flow; setting one on another kind changes nothing.
        var terms = modal.children[0]
        terms.flow = flow
        #expect(terms.role == .terms(stackIndex: 2) && terms.flow == nil)
    }

    @Test("a tree from before every coordinator kept where it began is made whole once, as its state is read: from its stacks")
    func legacyTrees() throws {
        let app = StackState(presentation: .root, presenter: "app", screens: [ScreenState(.photos, owner: "app"), ScreenState(.photo, photoId: 1, owner: "app")])
        // The sheet's flow presented stack 1, the terms stack 2.
        let sheets = [app, StackState(presentation: .modal, presenter: "buy-2", screens: [ScreenState(.buy, photoId: 1, owner: "buy-2")]),
                      StackState(presentation: .modal, presenter: "terms-4", screens: [ScreenState(.terms, owner: "terms-4")])]
        let modal = try Self.state(sheets, coordinators: Self.legacy[0]).coordinators?.children[0]
        #expect(modal?.flow == BuyFlow(presentation: .modal, photoId: 1, stackIndex: 1, initialDepth: 0))
        #expect(modal?.children[0].role == .terms(stackIndex: 2))
        // The push flow's first screen sits at depth 2 of the root stack.
        var pushed = app
        pushed.screens.append(ScreenState(.signIn, owner: "buy-3"))
        let push = try Self.state([pushed], coordinators: Self.legacy[1]).coordinators?.children[0]
        #expect(push?.flow == BuyFlow(presentation: .push, photoId: 1, stackIndex: 0, initialDepth: 2))
        // Written back whole.
        var state = try Self.state([pushed], coordinators: Self.legacy[1])
        state.refreshTop()
        #expect(state.jsonText.contains(#""id":"buy-3","initialDepth":2,"kind":"buy","photoId":1,"presentation":"push","stackIndex":0"#), "\(state.jsonText)")
        // Read alone, with no stacks to tell, such a tree is refused, naming what it lacks.
        for text in Self.legacy {
            #expect {
                try JSONDecoder().decode(CoordinatorState.self, from: Data(text.utf8))
            } throws: { error in
                guard case DecodingError.keyNotFound(let key, _) = error else { return false }
                return key.stringValue == "stackIndex"
            }
        }
    }

    @Test("a tree without what every version wrote (a tab's tab, a flow's presentation or photo) is refused, not defaulted")
    func incompleteTrees() throws {
        let incomplete = [
            (#"{"children":[{"children":[],"id":"tab-photos","kind":"tab"}],"id":"app","kind":"app"}"#, "tab"),
            (#"{"children":[{"children":[],"id":"buy-3","kind":"buy","photoId":1,"stackIndex":0,"initialDepth":1}],"id":"app","kind":"app"}"#, "presentation"),
            (#"{"children":[{"children":[],"id":"buy-3","kind":"buy","presentation":"modal","stackIndex":1}],"id":"app","kind":"app"}"#, "photoId"),
        ]
        for (text, field) in incomplete {
            #expect {
                try Self.state([], coordinators: text)
            } throws: { error in
                guard case DecodingError.keyNotFound(let key, _) = error else { return false }
                return key.stringValue == field
            }
        }
    }

    /// A stored session state with these stacks and this coordinator tree, read as photosd reads it.
    static func state(_ stacks: [StackState], coordinators: String) throws -> SessionState {
        // The stacks as the writer stores them (`{"stacks":[…]}`), with the tree added.
        let stacksOnly = SessionState(user: nil, tokenId: nil, stacks: stacks, coordinators: nil, top: nil).jsonText
        return try JSONDecoder().decode(SessionState.self, from: Data((stacksOnly.dropLast() + #","coordinators":\#(coordinators)}"#).utf8))
    }
}
