// One message: the user's words in a bubble on the right; a reply full width under the
// name of the model that wrote it, its text as blocks (only the live tail of a streaming
// reply is ever laid out again), and a line saying how it ended.
import QtQuick
import QtQuick.Controls.Basic

Item {
    id: row

    required property int index
    required property string rowId
    required property string author
    required property string header
    required property var blocks
    required property string badge
    required property string tone
    required property string stats
    required property string acted
    required property bool streaming
    required property string question
    required property var actions
    required property string version
    required property var versions
    required property string note
    required property var sources
    required property bool found
    required property var files
    property var colours
    property var look
    property var thumbs

    signal linkActivated(string link)
    signal linkHovered(string link)
    signal menuWanted(string rowId)
    signal actionTriggered(string rowId, string action)
    signal sourceActivated(string rowId, int n)
    signal fileActivated(string rowId, string fileId)
    signal stepDetailsWanted(string rowId, string stepId)
    signal stepLinkWanted(string rowId, string stepId, string uri)

    readonly property bool mine: author === "user"
    readonly property bool summary: author === "summary"
    readonly property bool last: ListView.view !== null && index === ListView.view.count - 1
    readonly property real column: Math.min(width - 2 * look.spacing.xl, look.column)
    // The keyboard is on something of this message (an action, a chip, a step's card):
    // its actions show as long as it stays there.
    readonly property bool focusInside: {
        for (let item = Window.activeFocusItem; item; item = item.parent) {
            if (item === row)
                return true
        }
        return false
    }

    // Whatever of this message the keyboard is on is brought into view: Tab reaches the
    // messages drawn just above and below the view too (the list's cache).
    function reveal(item) {
        const view = ListView.view
        if (!view || !item)
            return
        const top = item.mapToItem(view.contentItem, 0, 0).y - look.spacing.m
        const bottom = top + item.height + 2 * look.spacing.m
        if (top < view.contentY)
            view.contentY = top
        else if (bottom > view.contentY + view.height)
            view.contentY = bottom - view.height
        else
            return
        view.following = view.atYEnd
    }
    Connections {
        target: row.Window.window
        enabled: row.focusInside
        function onActiveFocusItemChanged() { row.reveal(row.Window.activeFocusItem) }
    }
    onFocusInsideChanged: if (focusInside) reveal(Window.activeFocusItem)

    objectName: "message-" + rowId
    implicitHeight: content.implicitHeight
    height: implicitHeight

    Column {
        id: content
        x: (row.width - row.column) / 2
        width: row.column
        spacing: look.spacing.xs

        Text {
            objectName: "header"
            visible: !row.mine && !row.summary && row.header !== ""
            text: row.header
            color: row.colours.muted
            font.pixelSize: row.look.type.small
            font.weight: Font.DemiBold
        }

        // Earlier messages summarised: a divider across the column, not easy to miss. The
        // messages above it stay (shown, searched); the model is given the summary instead.
        Rectangle {
            objectName: "summary"
            visible: row.summary
            width: parent.width
            height: visible ? summaryText.implicitHeight + 2 * row.look.spacing.s : 0
            radius: 8
            color: row.colours.surface
            border.color: row.colours.border
            Text {
                id: summaryText
                anchors.centerIn: parent
                width: parent.width - 2 * row.look.spacing.l
                horizontalAlignment: Text.AlignHCenter
                wrapMode: Text.Wrap
                text: "Earlier messages summarised · " + row.header
                color: row.colours.muted
                font.pixelSize: row.look.type.ui
            }
        }

        // A question's files, above its words: a chip each (opened or saved on a click).
        Flow {
            objectName: "files"
            visible: row.files.length > 0
            anchors.right: parent.right
            width: parent.width * 0.8
            layoutDirection: Qt.RightToLeft
            spacing: row.look.spacing.xs
            Repeater {
                model: row.files
                delegate: AbstractButton {
                    id: file
                    required property var modelData
                    objectName: "file"
                    property string label: modelData.name + " · " + modelData.size
                    hoverEnabled: true
                    focusPolicy: Qt.StrongFocus
                    Accessible.role: Accessible.Button
                    Accessible.name: (modelData.image ? "Image " : "File ") + label
                    ToolTip.visible: hovered || visualFocus
                    ToolTip.text: modelData.image ? "Open the image" : "Save the file"
                    ToolTip.delay: 400
                    implicitWidth: fileRow.implicitWidth + 2 * row.look.spacing.s
                    implicitHeight: fileRow.implicitHeight + 2 * row.look.spacing.xs
                    onClicked: row.fileActivated(row.rowId, modelData.id)
                    Keys.onReturnPressed: clicked()
                    background: Rectangle {
                        radius: 8
                        color: file.hovered ? row.colours.raised : row.colours.surface
                        border.color: file.visualFocus ? row.colours.accent : row.colours.border
                        border.width: file.visualFocus ? 2 : 1
                    }
                    contentItem: Row {
                        id: fileRow
                        spacing: row.look.spacing.xs
                        Image {
                            visible: !file.modelData.image
                            source: file.modelData.image ? "" : "image://icons/file/"
                                    + row.colours.muted.slice(1)
                            sourceSize: Qt.size(16, 16)
                            anchors.verticalCenter: parent.verticalCenter
                        }
                        // An image's thumbnail, once the window has fetched it.
                        Image {
                            objectName: "thumbnail"
                            visible: file.modelData.image
                            width: row.look.thumbnail
                            height: row.look.thumbnail
                            source: file.modelData.image
                                    ? "image://thumbs/" + file.modelData.id + "?r="
                                      + (row.thumbs ? row.thumbs.revision : 0)
                                    : ""
                            sourceSize: Qt.size(2 * width, 2 * height)
                            fillMode: Image.PreserveAspectCrop
                            cache: false
                            anchors.verticalCenter: parent.verticalCenter
                        }
                        Text {
                            text: file.label
                            color: row.colours.text
                            font.pixelSize: row.look.type.small
                            elide: Text.ElideMiddle
                            width: Math.min(implicitWidth, row.column * 0.5)
                            anchors.verticalCenter: parent.verticalCenter
                        }
                    }
                }
            }
        }

        // The user's words: a soft bubble, as wide as they need, right-aligned.
        Rectangle {
            id: bubble
            objectName: "bubble"
            visible: row.mine && row.question !== ""
            anchors.right: parent.right
            radius: row.look.bubbleRadius
            color: row.colours.bubble
            width: Math.min(measure.implicitWidth, row.column * 0.8) + 2 * row.look.spacing.l
            height: visible ? question.implicitHeight + 2 * row.look.spacing.m : 0

            Text {
                id: measure
                visible: false
                text: row.question
                textFormat: Text.RichText
                font: question.font
            }
            TextEdit {
                id: question
                objectName: "question"
                x: row.look.spacing.l
                y: row.look.spacing.m
                width: bubble.width - 2 * row.look.spacing.l
                text: row.question
                textFormat: TextEdit.RichText
                wrapMode: TextEdit.Wrap
                readOnly: true
                selectByMouse: true
                color: row.colours.text
                font.pixelSize: row.look.type.body
                Accessible.name: "You: " + getText(0, length)
            }
        }

        // A reply that has brought nothing yet says what it waits for (a model loading).
        Row {
            objectName: "waiting"
            visible: row.note !== ""
            spacing: row.look.spacing.s
            BusyIndicator {
                running: parent.visible
                implicitWidth: 18
                implicitHeight: 18
                anchors.verticalCenter: parent.verticalCenter
            }
            Text {
                objectName: "note"
                text: row.note
                color: row.colours.muted
                font.pixelSize: row.look.type.ui
                anchors.verticalCenter: parent.verticalCenter
                onTextChanged: waited.seconds = 0
            }
            // How long it has waited, once that is worth saying: the engine tells no progress
            // while it loads a model, and a still line reads as a hang.
            Text {
                id: waited
                objectName: "waited"
                property int seconds: 0
                visible: seconds >= 2
                text: seconds + " s"
                color: row.colours.muted
                font.pixelSize: row.look.type.ui
                font.features: { "tnum": 1 }
                anchors.verticalCenter: parent.verticalCenter
                Timer {
                    interval: 1000
                    repeat: true
                    running: row.note !== ""
                    onTriggered: waited.seconds += 1
                    onRunningChanged: waited.seconds = 0
                }
            }
        }

        // A reply: no bubble, text on the page.
        Column {
            id: reply
            objectName: "replyBody"
            visible: !row.mine && !row.summary
            width: parent.width
            Repeater {
                model: row.blocks
                // The gap above each block but the first, none above one that goes on with
                // the paragraph above it (a long paragraph cut while it streamed).
                delegate: Item {
                    id: slot
                    required property int index
                    required property string kind
                    required property string html
                    required property var step
                    required property bool joined
                    width: reply.width
                    height: block.y + block.height
                    Loader {
                        id: block
                        readonly property string html: slot.html
                        readonly property var step: slot.step
                        y: slot.index === 0 || slot.joined ? 0 : row.look.spacing.s
                        width: slot.width
                        sourceComponent: slot.kind === "step" ? stepCard : textBlock
                        Component {
                            id: textBlock
                            TextEdit {
                                objectName: "block"
                                width: block.width
                                text: block.html
                                textFormat: TextEdit.RichText
                                wrapMode: TextEdit.Wrap
                                readOnly: true
                                selectByMouse: true
                                color: row.colours.text
                                font.pixelSize: row.look.type.body
                                onLinkActivated: (link) => row.linkActivated(link)
                                onLinkHovered: (link) => row.linkHovered(link)
                                Accessible.name: getText(0, length)
                            }
                        }
                        Component {
                            id: stepCard
                            StepCard {
                                width: block.width
                                step: block.step
                                colours: row.colours
                                look: row.look
                                onDetailsWanted: (stepId) => row.stepDetailsWanted(row.rowId, stepId)
                                onLinkWanted: (stepId, uri) => row.stepLinkWanted(row.rowId, stepId, uri)
                            }
                        }
                    }
                }
            }
        }

        // Its sources: a chip each, numbered as the text cites them; one it was given but
        // did not cite is drawn fainter. A click (or Enter) opens the passage.
        Flow {
            objectName: "sources"
            visible: row.sources.length > 0
            width: parent.width
            spacing: row.look.spacing.xs
            Repeater {
                model: row.sources
                delegate: AbstractButton {
                    id: chip
                    required property var modelData
                    objectName: "source"
                    property string label: "[" + modelData.n + "] " + modelData.label
                    hoverEnabled: true
                    focusPolicy: Qt.StrongFocus
                    opacity: modelData.cited ? 1 : 0.6
                    Accessible.role: Accessible.Link
                    Accessible.name: "Source " + label
                    ToolTip.visible: hovered || visualFocus
                    ToolTip.text: modelData.path + (modelData.cited ? "" : " (given, not cited)")
                    ToolTip.delay: 400
                    implicitWidth: chipLabel.implicitWidth + 2 * row.look.spacing.s
                    implicitHeight: chipLabel.implicitHeight + row.look.spacing.xs * 2
                    onClicked: row.sourceActivated(row.rowId, modelData.n)
                    Keys.onReturnPressed: clicked()
                    background: Rectangle {
                        radius: height / 2
                        color: chip.hovered ? row.colours.raised : row.colours.surface
                        border.color: chip.visualFocus ? row.colours.accent : row.colours.border
                        border.width: chip.visualFocus ? 2 : 1
                    }
                    contentItem: Text {
                        id: chipLabel
                        text: chip.label
                        color: row.colours.text
                        font.pixelSize: row.look.type.small
                        horizontalAlignment: Text.AlignHCenter
                        verticalAlignment: Text.AlignVCenter
                    }
                }
            }
        }

        // How a reply ended, when it is worth saying, and its figures; a stop that cut a
        // call while it ran says so, as that call may have acted already.
        Row {
            spacing: row.look.spacing.s
            visible: row.badge !== "" || row.stats !== ""
            Text {
                objectName: "badge"
                visible: row.badge !== ""
                text: row.badge
                color: row.tone === "danger" ? row.colours.danger : row.colours.warning
                font.pixelSize: row.look.type.small
                font.weight: Font.DemiBold
            }
            Text {
                objectName: "stats"
                visible: row.stats !== ""
                text: row.stats
                color: row.colours.muted
                font.pixelSize: row.look.type.small
            }
        }
        Text {
            objectName: "acted"
            visible: row.acted !== ""
            width: parent.width
            wrapMode: Text.Wrap
            text: "⚠ " + row.acted
            color: row.colours.danger
            font.pixelSize: row.look.type.small
        }

        // Actions: icons shown while the pointer is over the message or the keyboard is
        // in it (Tab reaches them even while they are not shown). Their line is kept while
        // they are hidden, so the text never moves when they appear.
        FocusScope {
            id: actionBar
            objectName: "actions"
            width: parent.width
            height: buttons.implicitHeight
            visible: row.actions.length > 0
            // The newest message's stay shown, as the next thing one may want is there.
            opacity: hover.hovered || row.focusInside || row.last || row.summary ? 1 : 0
            Row {
                id: buttons
                anchors.right: row.mine ? parent.right : undefined
                anchors.horizontalCenter: row.summary ? parent.horizontalCenter : undefined
                spacing: row.look.spacing.xs
                Repeater {
                    model: row.actions
                    delegate: IconButton {
                        required property string modelData
                        objectName: "action-" + modelData
                        iconName: modelData
                        tip: ({copy: "Copy", edit: row.summary ? "Edit the summary" : "Edit",
                               regenerate: "Regenerate", continue: "Continue",
                               view: "View the summary", undo: "Undo the summary"})[modelData]
                        colours: row.colours
                        onClicked: row.actionTriggered(row.rowId, modelData)
                    }
                }
                // ‹ 2/3 ›: its other versions, the one before and the one after.
                IconButton {
                    objectName: "previousVersion"
                    visible: row.versions.length === 2
                    enabled: visible && row.versions[0] !== ""
                    iconName: "chevron-left"
                    tip: "Previous version"
                    colours: row.colours
                    onClicked: row.actionTriggered(row.versions[0], "version")
                }
                Text {
                    objectName: "version"
                    visible: row.version !== ""
                    text: row.version
                    color: row.colours.muted
                    font.pixelSize: row.look.type.small
                    anchors.verticalCenter: parent.verticalCenter
                }
                IconButton {
                    objectName: "nextVersion"
                    visible: row.versions.length === 2
                    enabled: visible && row.versions[1] !== ""
                    iconName: "chevron-right"
                    tip: "Next version"
                    colours: row.colours
                    onClicked: row.actionTriggered(row.versions[1], "version")
                }
            }
        }
    }

    HoverHandler {
        id: hover
    }
    TapHandler {
        acceptedButtons: Qt.RightButton
        onTapped: row.menuWanted(row.rowId)
    }

    // The message Find in chat is on: a band in the accent's colour beside it.
    Rectangle {
        objectName: "foundMark"
        visible: row.found
        x: content.x - row.look.spacing.m
        width: 3
        height: content.height
        radius: 1.5
        color: row.colours.accent
    }
}
