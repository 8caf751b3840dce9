/// An action for the session's top screen (the screens' handlers of the coordinator pattern:
/// `didSelectPhoto`, `didBuyPhoto`, `didSignIn`, `didCancel`, `didShowTerms`, …).
public enum Action: Sendable, Hashable, CustomStringConvertible {
    /// On `photos` or `purchases`: show a photo.
    case selectPhoto(Int)
    /// On `photos`: buy a photo in a modal purchase flow.
    case buyPhoto(Int)
    /// Present sign-in (signed out).
    case signIn
    /// Sign out (signed in, on `photos`).
    case signOut
    /// On `photo`: start the purchase flow; on `buy`: complete the purchase.
    case buy
    /// Pop the top screen (the system back button).
    case back
    /// On `signIn`: the credentials. The password is sent once and kept nowhere.
    case submit(username: String, password: String)
    /// Cancel the flow or sheet on top.
    case cancel
    /// On `buy`: show the terms sheet.
    case showTerms
    /// The swipe-down on a modal stack's root.
    case dismiss
    /// Show a tab (tabs sessions).
    case selectTab(Tab)
    /// Go to a deep link (`/photos/3/buy`) from anywhere: accepted on every screen.
    case openLink(String)

    /// The action's name, as the server lists it in `top.actions`.
    public var name: ActionName {
        switch self {
        case .selectPhoto: .selectPhoto
        case .buyPhoto: .buyPhoto
        case .signIn: .signIn
        case .signOut: .signOut
        case .buy: .buy
        case .back: .back
        case .submit: .submit
        case .cancel: .cancel
        case .showTerms: .showTerms
        case .dismiss: .dismiss
        case .selectTab: .selectTab
        case .openLink: .openLink
        }
    }

    /// The request body, expecting the session at `version`.
    func request(expectVersion version: Int?) -> Components.Schemas.ActionRequest {
        var request = Components.Schemas.ActionRequest(action: name.generated(), expectVersion: version)
        switch self {
        case .selectPhoto(let id), .buyPhoto(let id): request.photoId = id
        case .submit(let username, let password):
            request.username = username
            request.password = password
        case .selectTab(let tab): request.tab = tab.generated()
        case .openLink(let link): request.link = link
        case .signIn, .signOut, .buy, .back, .cancel, .showTerms, .dismiss: break
        }
        return request
    }

    /// The action without its password: `submit(username: alice)`.
    public var description: String {
        switch self {
        case .selectPhoto(let id): "selectPhoto(\(id))"
        case .buyPhoto(let id): "buyPhoto(\(id))"
        case .submit(let username, _): "submit(username: \(username))"
        case .selectTab(let tab): "selectTab(\(tab.rawValue))"
        case .openLink(let link): "openLink(\(link))"
        default: name.rawValue
        }
    }
}
