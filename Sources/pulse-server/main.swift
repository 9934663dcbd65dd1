import Foundation
import PulseServer

exit(ServerCommand.main(Array(CommandLine.arguments.dropFirst())))
