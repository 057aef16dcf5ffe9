// A card of the welcome page: an icon, a title and what it does, and its key; a click,
// Enter or Space does it. Its focus ring shows where the keyboard is.
import QtQuick
import QtQuick.Controls.Basic

AbstractButton {
    id: card

    required property var entry
    property var colours
    property var look

    objectName: "welcomeCard"
    hoverEnabled: true
    focusPolicy: Qt.StrongFocus
    Accessible.role: Accessible.Button
    Accessible.name: card.entry.title
    Accessible.description: entry.hint
    Keys.onReturnPressed: clicked()
    Keys.onEnterPressed: clicked()
    padding: look.spacing.m
    leftPadding: look.spacing.l
    rightPadding: look.spacing.l
    implicitHeight: Math.max(contentItem.implicitHeight, 24) + topPadding + bottomPadding

    background: Rectangle {
        radius: 12
        color: card.down ? card.colours.border
               : card.hovered ? card.colours.raised : card.colours.surface
        border.width: card.visualFocus ? 2 : 1
        border.color: card.visualFocus ? card.colours.accent
                      : card.hovered ? card.colours.muted : card.colours.border
    }
    contentItem: Row {
        spacing: card.look.spacing.m
        Image {
            source: "image://icons/" + card.entry.icon + "/"
                    + (card.hovered || card.visualFocus ? card.colours.accent
                                                        : card.colours.muted).slice(1)
            sourceSize: Qt.size(20, 20)
            anchors.verticalCenter: parent.verticalCenter
        }
        Column {
            id: words
            width: parent.width - 20 - keyHint.width - 2 * card.look.spacing.m
            anchors.verticalCenter: parent.verticalCenter
            spacing: 2
            Text {
                objectName: "welcomeCardTitle"
                width: parent.width
                text: card.entry.title
                color: card.colours.text
                font.pixelSize: card.entry.hint === "" ? card.look.type.body : card.look.type.ui
                font.weight: card.entry.hint === "" ? Font.Normal : Font.DemiBold
                wrapMode: Text.Wrap
            }
            Text {
                visible: card.entry.hint !== ""
                width: parent.width
                text: card.entry.hint
                color: card.colours.muted
                font.pixelSize: card.look.type.small
                wrapMode: Text.Wrap
            }
        }
        // Its key, as a keycap; an example's arrow says a click sends it.
        Item {
            id: keyHint
            width: card.entry.key !== "" ? keycap.width : 16
            height: 20
            anchors.verticalCenter: parent.verticalCenter
            Rectangle {
                id: keycap
                visible: card.entry.key !== ""
                width: keyText.implicitWidth + 2 * card.look.spacing.s
                height: keyText.implicitHeight + card.look.spacing.xs
                anchors.verticalCenter: parent.verticalCenter
                radius: 6
                color: card.colours.background
                border.color: card.colours.border
                Text {
                    id: keyText
                    anchors.centerIn: parent
                    text: card.entry.key
                    color: card.colours.muted
                    font.pixelSize: card.look.type.small
                }
            }
            Image {
                visible: card.entry.key === "" && card.entry.hint === ""
                opacity: card.hovered || card.visualFocus ? 1 : 0
                anchors.verticalCenter: parent.verticalCenter
                source: "image://icons/arrow-right/" + card.colours.accent.slice(1)
                sourceSize: Qt.size(16, 16)
            }
        }
    }
}
