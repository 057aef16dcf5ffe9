// The transcript: a virtualised list of messages. Only the rows on screen (and a little
// around them) exist; each is drawn from the row's properties, which Python holds.
import QtQuick
import QtQuick.Controls.Basic

ListView {
    id: list
    objectName: "transcript"

    required property var rows
    required property var colours
    required property var look
    required property var thumbs  // thumbnails.py: `revision` moves as images arrive
    // Stays at the newest message while it grows, until the user scrolls away from it.
    property bool following: true
    // A new chat's page (welcome.py's WelcomePage), shown while it has no message; "": none.
    property var welcome: ""
    // How wide a reply's text is drawn (MessageRow's column): Python cuts a long paragraph
    // that streams where its lines wrap at this width (sealing.py).
    readonly property real textWidth: Math.min(width - 2 * look.spacing.xl, look.column)

    signal linkActivated(string link)
    signal linkHovered(string link)
    signal menuWanted(string rowId)
    signal actionTriggered(string rowId, string action)
    signal sourceActivated(string rowId, int n)
    signal fileActivated(string rowId, string fileId)
    signal stepDetailsWanted(string rowId, string stepId)
    signal stepLinkWanted(string rowId, string stepId, string uri)
    signal reachedTop()  // the first message shown is in view: earlier ones may be wanted

    model: rows
    clip: true
    spacing: look.spacing.s
    topMargin: look.spacing.xl
    bottomMargin: look.spacing.xl
    boundsBehavior: Flickable.StopAtBounds
    cacheBuffer: 600
    reuseItems: true
    activeFocusOnTab: true
    Accessible.role: Accessible.List
    Accessible.name: "Conversation"

    ScrollBar.vertical: ScrollBar {
        objectName: "transcriptScrollBar"
        policy: ScrollBar.AsNeeded
    }

    onMovementEnded: following = atYEnd
    onAtYBeginningChanged: if (atYBeginning && count > 0) list.reachedTop()
    onContentHeightChanged: if (following) Qt.callLater(list.positionViewAtEnd)
    onCountChanged: if (following) Qt.callLater(list.positionViewAtEnd)

    Loader {
        active: !!list.welcome && list.count === 0
        parent: list
        x: (list.width - width) / 2
        y: list.look.spacing.xxl + list.look.spacing.l
        width: Math.min(list.width - 2 * list.look.spacing.xl, 640)
        sourceComponent: Welcome {
            content: list.welcome
            colours: list.colours
            look: list.look
            onLinkActivated: (link) => list.linkActivated(link)
        }
    }

    delegate: MessageRow {
        width: ListView.view.width
        colours: list.colours
        look: list.look
        thumbs: list.thumbs
        onLinkActivated: (link) => list.linkActivated(link)
        onLinkHovered: (link) => list.linkHovered(link)
        onMenuWanted: (rowId) => list.menuWanted(rowId)
        onActionTriggered: (rowId, action) => list.actionTriggered(rowId, action)
        onSourceActivated: (rowId, n) => list.sourceActivated(rowId, n)
        onFileActivated: (rowId, fileId) => list.fileActivated(rowId, fileId)
        onStepDetailsWanted: (rowId, stepId) => list.stepDetailsWanted(rowId, stepId)
        onStepLinkWanted: (rowId, stepId, uri) => list.stepLinkWanted(rowId, stepId, uri)
    }
}
