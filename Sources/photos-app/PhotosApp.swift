import PhotosClient

@main
struct PhotosApp {
    static func main() async {}
}
