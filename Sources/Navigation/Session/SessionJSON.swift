import PhotosModel

// The one JSON writer of what every action writes: the persisted state (`sessions.state`), the
// session object and the action's answer. The types are `Decodable` only, so there is no second
// encoder to keep in step: 34 % more actions per second than `JSONEncoder` on either store
// (docs/benchmarks.md). Keys are in sorted order, absent fields left out (the API's explicit
// nulls written); tests hold every field to a round trip (what is written reads back equal).

extension SessionState {
    /// The JSON stored in `sessions.state`.
    public var jsonText: String {
        var json = JSONBuilder(capacity: 1_024)
        write(to: &json)
        return json.text
    }

    func write(to json: inout JSONBuilder) {
        json.beginObject()
        if let coordinators {
            json.key("coordinators")
            coordinators.write(to: &json)
        }
        if let experiments {
            json.key("experiments")
            ExperimentExposure.write(experiments, to: &json)
        }
        json.field("layout", layout?.rawValue)
        json.key("stacks")
        StackState.write(stacks, to: &json)
        if let tabs {
            json.key("tabs")
            json.beginObject()
            json.key("parked")
            StackState.write(tabs.parked, to: &json)
            json.field("selected", tabs.selected.rawValue)
            json.endObject()
        }
        json.field("tokenId", tokenId)
        if let top {
            json.key("top")
            top.write(to: &json)
        }
        if let user {
            json.key("user")
            user.write(to: &json)
        }
        json.endObject()
    }
}

extension StackState {
    static func write(_ stacks: [StackState], to json: inout JSONBuilder) {
        json.beginArray()
        for stack in stacks {
            json.beginObject()
            json.field("presentation", stack.presentation.rawValue)
            json.field("presenter", stack.presenter)
            json.key("screens")
            json.beginArray()
            for screen in stack.screens {
                json.beginObject()
                json.field("owner", screen.owner)
                json.field("photoId", screen.photoId)
                json.field("screen", screen.screen.rawValue)
                json.endObject()
            }
            json.endArray()
            json.field("tab", stack.tab?.rawValue)
            json.endObject()
        }
        json.endArray()
    }
}

extension CoordinatorState {
    /// The stored object, keys sorted and absent fields left out, as its `Codable` writes it.
    func write(to json: inout JSONBuilder) {
        json.beginObject()
        json.key("children")
        json.beginArray()
        for child in children { child.write(to: &json) }
        json.endArray()
        json.field("id", id)
        let flow = self.flow
        // A sheet's depth is 0 by definition: stored as every version stored it, absent.
        json.field("initialDepth", flow?.presentation == .push ? flow?.initialDepth : nil)
        json.field("kind", kind.rawValue)
        json.field("photoId", flow?.photoId)
        json.field("presentation", flow?.presentation.rawValue)
        switch role {
        case .buy(let flow): json.field("stackIndex", flow.stackIndex)
        case .terms(let stackIndex): json.field("stackIndex", stackIndex)
        case .app, .tab: break
        }
        json.field("tab", tab?.rawValue)
        if flow?.termsSeen == true {
            json.key("termsSeen")
            json.bool(true)
        }
        if let variants = flow?.variants, !variants.isEmpty {
            json.key("variants")
            json.beginObject()
            for (point, value) in variants.sorted(by: { $0.key < $1.key }) {
                json.key(point)
                json.string(value)
            }
            json.endObject()
        }
        json.endObject()
    }
}

extension TopScreen {
    func write(to json: inout JSONBuilder) {
        json.beginObject()
        json.key("actions")
        json.beginArray()
        for action in actions { json.string(action.rawValue) }
        json.endArray()
        json.field("screen", screen.rawValue)
        json.endObject()
    }
}

extension ExperimentExposure {
    static func write(_ exposures: [ExperimentExposure], to json: inout JSONBuilder) {
        json.beginArray()
        for exposure in exposures {
            json.beginObject()
            json.field("experiment", exposure.experiment)
            json.field("variant", exposure.variant)
            json.endObject()
        }
        json.endArray()
    }
}

extension SessionUser {
    func write(to json: inout JSONBuilder) {
        json.beginObject()
        json.field("id", id)
        json.field("username", username)
        json.endObject()
    }
}

extension SessionView {
    /// The session object of the API, as JSON.
    public var jsonText: String {
        var json = JSONBuilder(capacity: 1_024)
        write(to: &json)
        return json.text
    }

    /// `POST /v1/sessions`'s answer: the session object with `sessionSecret` added as its last
    /// field (the secret is base64url: nothing in it needs escaping).
    public func jsonText(sessionSecret secret: String) -> String {
        let session = jsonText
        guard session.last == "}" else { return session }
        return session.dropLast() + #","sessionSecret":""# + secret + #""}"#
    }

    /// Writes the session object.
    public func write(to json: inout JSONBuilder) {
        json.beginObject()
        if let coordinators {
            json.key("coordinators")
            coordinators.write(to: &json)
        }
        json.key("experiments")
        json.beginArray()
        for exposure in experiments {
            json.beginObject()
            json.field("name", exposure.name)
            json.field("variant", exposure.variant)
            json.endObject()
        }
        json.endArray()
        json.field("id", id)
        json.field("layout", layout.rawValue)
        json.key("navigation")
        json.beginArray()
        for stack in navigation {
            json.beginObject()
            json.field("presentation", stack.presentation.rawValue)
            json.key("screens")
            ScreenView.write(stack.screens, to: &json)
            json.field("tab", stack.tab?.rawValue)
            json.endObject()
        }
        json.endArray()
        json.key("tabs")
        if let tabs {
            json.beginObject()
            json.key("items")
            json.beginArray()
            for item in tabs.items {
                json.beginObject()
                json.key("screens")
                ScreenView.write(item.screens, to: &json)
                json.field("tab", item.tab.rawValue)
                json.endObject()
            }
            json.endArray()
            json.field("selected", tabs.selected.rawValue)
            json.endObject()
        } else {
            json.null()
        }
        if let top {
            json.key("top")
            top.write(to: &json)
        }
        json.key("user")
        if let user { user.write(to: &json) } else { json.null() }
        json.field("version", version)
        json.endObject()
    }
}

extension ScreenView {
    static func write(_ screens: [ScreenView], to json: inout JSONBuilder) {
        json.beginArray()
        for screen in screens {
            json.beginObject()
            json.field("photoId", screen.photoId)
            if let photos = screen.photos {
                json.key("photos")
                json.beginArray()
                for photo in photos {
                    json.beginObject()
                    json.field("id", photo.id)
                    json.field("priceCents", photo.priceCents)
                    json.key("purchased")
                    json.bool(photo.purchased)
                    json.field("title", photo.title)
                    json.field("url", photo.url)
                    json.endObject()
                }
                json.endArray()
            }
            if let purchased = screen.purchased {
                json.key("purchased")
                json.bool(purchased)
            }
            json.field("screen", screen.screen.rawValue)
            json.endObject()
        }
        json.endArray()
    }
}

extension CoordinatorView {
    func write(to json: inout JSONBuilder) {
        json.beginObject()
        json.key("children")
        json.beginArray()
        for child in children { child.write(to: &json) }
        json.endArray()
        json.field("id", id)
        json.field("kind", kind.rawValue)
        json.field("photoId", photoId)
        json.field("presentation", presentation?.rawValue)
        json.endObject()
    }
}

extension AuditRow {
    func write(to json: inout JSONBuilder) {
        json.beginObject()
        json.field("actor", actor)
        json.field("at", at)
        json.field("coordinator", coordinator)
        json.field("detail", detail)
        json.field("screen", screen)
        json.field("seq", seq)
        json.field("sessionId", sessionId)
        json.field("step", step)
        json.field("username", username)
        json.endObject()
    }
}

extension ActionResult {
    /// The action response of the API, as JSON.
    public var jsonText: String {
        var json = JSONBuilder(capacity: 2_048)
        write(to: &json)
        return json.text
    }

    /// Writes the answer's object (not `isReplay` or `sessionSecret`: neither is stored or sent
    /// with it).
    public func write(to json: inout JSONBuilder) {
        json.beginObject()
        if let error {
            json.key("error")
            json.beginObject()
            if let allowed = error.allowed {
                json.key("allowed")
                json.beginArray()
                for action in allowed { json.string(action.rawValue) }
                json.endArray()
            }
            json.field("code", error.code.rawValue)
            json.field("message", error.message)
            json.endObject()
        }
        json.key("events")
        json.beginArray()
        for event in events { event.write(to: &json) }
        json.endArray()
        json.field("outcome", outcome.rawValue)
        json.key("session")
        session.write(to: &json)
        json.field("token", token)
        json.endObject()
    }
}
