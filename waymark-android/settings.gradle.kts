// The Android library on its own: `gradle -p waymark-android build` (Gradle 8 or 9, JDK 17).
// An app that includes the module (docs/android.md, "Adding it to an app") uses its own
// settings instead; this file is read only when the module is built alone.
pluginManagement {
    repositories {
        gradlePluginPortal()
        mavenCentral()
    }
    plugins {
        // The Kotlin version the module is built with when built alone.
        kotlin("jvm") version "2.1.21"
    }
}

dependencyResolutionManagement {
    repositories {
        mavenCentral()
    }
}

rootProject.name = "waymark-android"
