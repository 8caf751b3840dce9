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
    /// a modal flow and its terms sheet; a flow from before the interpreter kept where it began.
    static let stored = [
        #"{"children":[{"children":[],"id":"buy-3","initialDepth":2,"kind":"buy","photoId":2,"presentation":"push","stackIndex":0,"termsSeen":true,"variants":{"signIn.when":"atPurchase","terms.required":"yes"}}],"id":"app","kind":"app"}"#,
        #"{"children":[{"children":[],"id":"tab-photos","kind":"tab","tab":"photos"},{"children":[{"children":[{"children":[],"id":"terms-9","kind":"terms","stackIndex":2}],"id":"buy-5","kind":"buy","photoId":4,"presentation":"modal","stackIndex":1}],"id":"tab-purchases","kind":"tab","tab":"purchases"}],"id":"app","kind":"app"}"#,
        #"{"children":[{"children":[{"children":[],"id":"terms-4","kind":"terms"}],"id":"buy-2","kind":"buy","photoId":1,"presentation":"modal"}],"id":"app","kind":"app"}"#,
    ]

    @Test("stored trees read into roles and write back byte for byte (Codable and the hand-written writer)", arguments: stored)
    func roundTrip(text: String) throws {
        let tree = try JSONDecoder().decode(CoordinatorState.self, from: Data(text.utf8))
        #expect(try encodeSorted(tree) == text)
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
        #expect(modal.flow?.presentation == .modal && modal.flow?.initialDepth == nil && modal.children[0].role == .terms(stackIndex: 2))
        #expect(modal.flow?.termsSeen == false && modal.flow?.variants == [:])
        // Only a flow has a flow; setting one on another kind changes nothing.
        var terms = modal.children[0]
        terms.flow = flow
        #expect(terms.role == .terms(stackIndex: 2) && terms.flow == nil)
    }
}
