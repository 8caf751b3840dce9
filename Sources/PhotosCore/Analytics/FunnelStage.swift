/// The purchase-funnel stage an audit step counts for (`funnel_marks.stage`), as migration 0004
/// defines it for the rows it back-fills; `AnalyticsTests` holds the two to the same marks.
enum FunnelStage: Int {
    case sessionStarted = 1, viewedPhoto, startedBuy, askedToSignIn, purchased

    /// The stage of a step of trail `sessionID`, or nil for a step the funnel does not count.
    init?(sessionID: String, step: String, screen: String?, coordinator: String?) {
        guard sessionID != AuditLog.operatorSession, sessionID != AuditLog.apiSession else { return nil }
        let byBuyFlow = coordinator?.hasSuffix("/buy") == true
        switch step {
        case "session.start": self = .sessionStarted
        case "purchase.completed": self = .purchased
        case "screen.push" where screen == "photo": self = .viewedPhoto
        case "screen.push" where screen == "signIn" && byBuyFlow, "screen.present" where screen == "signIn" && byBuyFlow:
            self = .askedToSignIn
        case "coordinator.start" where byBuyFlow: self = .startedBuy
        default: return nil
        }
    }
}
