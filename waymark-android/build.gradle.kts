// The Android library as a Gradle module: plain Kotlin/JVM (no Android resources, so no
// Android Gradle plugin is needed; an app or an Android library module depends on it like
// any JVM library). The build here does not use this file (build.sh, make test-android);
// what it checks holds for it: the sources compile under Kotlin 1.3 and 2.x, and use no
// Android API above minSdk (api-levels.txt, the one place that figure lives).
import org.jetbrains.kotlin.gradle.dsl.JvmTarget

plugins {
    `java-library`
    `maven-publish`
    // No version here: built alone, settings.gradle.kts names it; included in an app's build,
    // the Kotlin plugin the app's root build puts on the classpath is used (a version here
    // would clash with it: "already on the classpath with a different version").
    kotlin("jvm")
}

group = "dev.waymark"
version = "0.1.0"

// Java and Kotlin both target JVM 1.8 bytecode, which Android's D8 takes at every API
// level; Gradle 8 refuses a build whose Java and Kotlin targets differ.
java {
    sourceCompatibility = JavaVersion.VERSION_1_8
    targetCompatibility = JavaVersion.VERSION_1_8
    withSourcesJar()
}

kotlin {
    compilerOptions {
        jvmTarget.set(JvmTarget.JVM_1_8)
    }
}

sourceSets {
    main { kotlin.srcDir("src/main/kotlin") }
    test { kotlin.srcDir("src/test/kotlin") }
}

dependencies {
    testImplementation(platform("org.junit:junit-bom:5.11.4"))
    testImplementation("org.junit.jupiter:junit-jupiter")
    // Gradle 9 no longer puts a JUnit Platform launcher on the test runtime by itself.
    testRuntimeOnly("org.junit.platform:junit-platform-launcher")
}

tasks.test {
    useJUnitPlatform()
    // The tests read the shared conformance files in place, never copies.
    systemProperty("waymark.conformance", layout.projectDirectory.dir("../conformance").asFile.path)
    systemProperty("waymark.root", layout.projectDirectory.dir("..").asFile.path)
    // The benchmark and the two tools under src/test are run by build.sh, not as tests.
    exclude("dev/waymark/bench/**", "dev/waymark/tools/**")
}

publishing {
    publications {
        create<MavenPublication>("library") {
            artifactId = "waymark-android"
            from(components["java"])
            pom {
                name.set("Waymark for Android")
                description.set("The app's half of Waymark: the deep-link routing engine, the manifest client, the dispatcher and the telemetry reporter, in Kotlin with its standard library alone.")
                licenses {
                    license {
                        name.set("The Apache License, Version 2.0")
                        url.set("https://www.apache.org/licenses/LICENSE-2.0.txt")
                    }
                }
            }
        }
    }
}
