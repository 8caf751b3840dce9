import Navigation
import PhotosModel
import Testing

/// The replay is strict: a step the trail cannot back (an edited row) fails the replay at its
/// seq, and is never read as a default ("photo 0", a pushed flow, the photos tab).
@Suite("SessionReplay")
struct SessionReplayTests {
    /// A trail up to a purchase flow's start, its detail as given.
    static func rows(buyDetail: String) -> [AuditRow] {
        let steps: [(String?, String, String?, String)] = [
            (nil, "session.start", nil, #"{"layout":"stack"}"#),
            ("app", "coordinator.start", nil, #"{"id":"app","kind":"app"}"#),
            ("app", "screen.push", "photos", "{}"),
            ("app/buy", "coordinator.start", nil, buyDetail),
            ("app/buy", "screen.present", "signIn", "{}"),
        ]
        return steps.enumerated().map { index, step in
            AuditRow(
                sessionId: "s", seq: index + 1, at: "2026-12-04T00:00:00Z", actor: "client", username: nil, coordinator: step.0, step: step.1,
                screen: step.2, detail: step.3)
        }
    }

    @Test("a flow's start replays to the flow it recorded, where it began taken from the stacks")
    func recordedFlow() throws {
        let state = try SessionReplay.state(from: Self.rows(buyDetail: #"{"id":"buy-4","kind":"buy","photoId":7,"presentation":"modal"}"#))
        #expect(state.coordinators?.children.first?.flow == BuyFlow(presentation: .modal, photoId: 7, stackIndex: 1, initialDepth: 0))
        #expect(state.stacks.count == 2 && state.topScreen?.screen == .signIn)
    }

    @Test("a flow's start without its photo or presentation fails the replay at its seq", arguments: [
        #"{"id":"buy-4","kind":"buy","presentation":"modal"}"#, #"{"id":"buy-4","kind":"buy","photoId":7}"#,
        #"{"id":"buy-4","kind":"buy","photoId":"7","presentation":"modal"}"#,
    ])
    func editedFlow(detail: String) throws {
        #expect {
            try SessionReplay.state(from: Self.rows(buyDetail: detail))
        } throws: { error in
            guard let replay = error as? SessionReplay.ReplayError else { return false }
            return replay.seq == 4 && replay.message.contains("presentation and photoId")
        }
    }

    @Test("a tab's start without its tab fails the replay")
    func editedTab() throws {
        var rows = Self.rows(buyDetail: "{}").prefix(2).map { $0 }
        rows[0] = AuditRow(
            sessionId: "s", seq: 1, at: rows[0].at, actor: "client", username: nil, coordinator: nil, step: "session.start", screen: nil,
            detail: #"{"layout":"tabs"}"#)
        rows.append(AuditRow(
            sessionId: "s", seq: 3, at: rows[0].at, actor: "client", username: nil, coordinator: "app/photos", step: "coordinator.start", screen: nil,
            detail: #"{"id":"tab-photos","kind":"tab"}"#))
        #expect {
            try SessionReplay.state(from: rows)
        } throws: { error in
            (error as? SessionReplay.ReplayError)?.seq == 3
        }
    }
}
