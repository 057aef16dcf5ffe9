// A tool step (or a sub-agent) as a card: a status chip and its title in one line, which
// opens on a click or Enter to show the call's arguments and its result. A long call shows
// its progress; the one that waits for the user is marked in the warning colour. The resources
// its result linked to are listed under it, each opened (read through the step) on a click,
// Enter or Space.
import QtQuick
import QtQuick.Controls.Basic

Rectangle {
    id: card

    required property var step
    property var colours
    property var look
    property bool expanded: false

    signal detailsWanted(string stepId)
    signal linkWanted(string stepId, string uri)

    readonly property color statusColour: ({
        running: colours.accent, awaiting_approval: colours.warning, completed: colours.success,
        error: colours.danger, interrupted: colours.warning, denied: colours.muted,
        needs_sign_in: colours.warning
    })[step.status] || colours.muted

    objectName: "step"
    radius: 10
    color: colours.surface
    border.color: step.status === "awaiting_approval" ? colours.warning : colours.border
    border.width: step.status === "awaiting_approval" ? 2 : 1
    implicitHeight: column.implicitHeight + 2 * look.spacing.s
    activeFocusOnTab: true
    Accessible.role: Accessible.Button
    Accessible.name: step.title + ", " + step.status_text
                     + (step.reason ? ". " + step.reason : "")
    Keys.onReturnPressed: expanded = !expanded
    Keys.onSpacePressed: expanded = !expanded

    Rectangle {  // the keyboard's focus ring
        anchors.fill: parent
        radius: parent.radius
        color: "transparent"
        border.color: card.colours.accent
        border.width: 2
        visible: card.activeFocus
    }

    Column {
        id: column
        x: card.look.spacing.m
        y: card.look.spacing.s
        width: card.width - 2 * card.look.spacing.m
        spacing: card.look.spacing.xs

        Item {
            width: parent.width
            height: Math.max(chip.height, title.implicitHeight)
            Rectangle {
                id: chip
                objectName: "stepStatus"
                property string text: card.step.status_text
                width: chipText.implicitWidth + 2 * card.look.spacing.s
                height: chipText.implicitHeight + 4
                radius: height / 2
                color: Qt.rgba(card.statusColour.r, card.statusColour.g, card.statusColour.b, 0.15)
                Text {
                    id: chipText
                    anchors.centerIn: parent
                    text: chip.text
                    color: card.statusColour
                    font.pixelSize: card.look.type.small
                    font.weight: Font.DemiBold
                }
            }
            Text {
                id: title
                objectName: "stepTitle"
                anchors.left: chip.right
                anchors.leftMargin: card.look.spacing.s
                anchors.right: state.left
                anchors.rightMargin: card.look.spacing.s
                anchors.verticalCenter: chip.verticalCenter
                text: card.step.title
                elide: Text.ElideRight
                color: card.colours.text
                font.pixelSize: card.look.type.ui
            }
            Text {
                id: state
                objectName: "stepState"
                anchors.right: details.left
                anchors.rightMargin: card.look.spacing.xs
                anchors.verticalCenter: chip.verticalCenter
                text: card.step.state
                color: card.colours.muted
                font.pixelSize: card.look.type.small
            }
            AbstractButton {
                id: details
                objectName: "stepDetailsButton"
                anchors.right: parent.right
                anchors.verticalCenter: chip.verticalCenter
                focusPolicy: Qt.StrongFocus
                hoverEnabled: true
                implicitWidth: detailsText.implicitWidth + 2 * card.look.spacing.xs
                implicitHeight: detailsText.implicitHeight + 4
                Accessible.role: Accessible.Button
                Accessible.name: "Details of " + card.step.title
                onClicked: card.detailsWanted(card.step.id)
                Keys.onReturnPressed: clicked()
                contentItem: Text {
                    id: detailsText
                    text: "Details"
                    color: details.hovered || details.visualFocus ? card.colours.accent
                                                                    : card.colours.muted
                    font.pixelSize: card.look.type.small
                    font.underline: details.visualFocus
                }
                background: Item {}
            }
            TapHandler {
                onTapped: card.expanded = !card.expanded
            }
        }

        // A sub-agent's own steps, and the start of what it said last.
        Repeater {
            model: card.step.inner || []
            delegate: Text {
                required property string modelData
                objectName: "stepInner"
                width: column.width
                leftPadding: card.look.spacing.l
                text: "↳ " + modelData
                elide: Text.ElideRight
                color: card.colours.muted
                font.pixelSize: card.look.type.small
            }
        }
        Text {
            objectName: "stepSaid"
            visible: (card.step.said || "") !== ""
            width: parent.width
            leftPadding: card.look.spacing.l
            text: "“" + card.step.said + "”"
            wrapMode: Text.Wrap
            font.italic: true
            color: card.colours.muted
            font.pixelSize: card.look.type.small
        }

        // Why the injection guard asked, and who let the call run: saved with the step.
        Text {
            objectName: "stepReason"
            visible: (card.step.reason || "") !== ""
            width: parent.width
            leftPadding: card.look.spacing.l
            text: card.step.reason || ""
            textFormat: Text.PlainText
            wrapMode: Text.Wrap
            color: card.colours.warning
            font.pixelSize: card.look.type.small
        }
        Text {
            objectName: "stepAllowed"
            visible: (card.step.allowed || "") !== ""
            width: parent.width
            leftPadding: card.look.spacing.l
            text: card.step.allowed || ""
            textFormat: Text.PlainText
            elide: Text.ElideRight
            color: card.colours.muted
            font.pixelSize: card.look.type.small
        }

        // The resources its result linked to: read through the step, shown in Parley.
        Repeater {
            model: card.step.links || []
            delegate: AbstractButton {
                id: link
                required property var modelData
                objectName: "stepLink"
                width: Math.min(column.width, linkText.implicitWidth + card.look.spacing.l)
                implicitHeight: linkText.implicitHeight + 4
                focusPolicy: Qt.StrongFocus
                hoverEnabled: true
                Accessible.role: Accessible.Link
                Accessible.name: "Open the linked resource " + modelData.label
                onClicked: card.linkWanted(modelData.step, modelData.uri)
                Keys.onReturnPressed: clicked()
                Keys.onEnterPressed: clicked()
                contentItem: Text {
                    id: linkText
                    leftPadding: card.look.spacing.l
                    text: "↗ " + link.modelData.label
                    elide: Text.ElideRight
                    color: card.colours.accent
                    font.pixelSize: card.look.type.small
                    font.underline: link.hovered || link.visualFocus
                }
                background: Item {}
            }
        }

        ProgressBar {
            objectName: "stepProgress"
            visible: card.step.status === "running" && card.step.progress >= 0
            width: parent.width
            value: Math.max(0, card.step.progress)
            background: Rectangle {
                implicitHeight: 4
                radius: 2
                color: card.colours.raised
            }
            contentItem: Item {
                implicitHeight: 4
                Rectangle {
                    width: parent.width * card.step.progress
                    height: parent.height
                    radius: 2
                    color: card.colours.accent
                }
            }
        }
        Text {
            visible: card.step.progress_text !== "" && card.step.status === "running"
            text: card.step.progress_text
            color: card.colours.muted
            font.pixelSize: card.look.type.small
            width: parent.width
            elide: Text.ElideRight
        }

        TextEdit {
            objectName: "stepDetails"
            visible: card.expanded
            width: parent.width
            readOnly: true
            selectByMouse: true
            wrapMode: TextEdit.Wrap
            textFormat: TextEdit.PlainText
            font.family: "monospace"
            font.pixelSize: card.look.type.small
            color: card.colours.text
            text: card.step.arguments + (card.step.result !== "" ? "\n\n→ " + card.step.result : "")
        }
    }
}
